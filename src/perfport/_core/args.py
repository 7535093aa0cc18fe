"""Kernel arguments: global arrays (how they are filled and checked), scalars and local
buffers, as frozen records of a KernelSpec."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from perfport._core import checking
from perfport._core.errors import SpecError


class Init(Enum):
    """How an input array is filled (always from the campaign's seed)."""

    RANDOM = "random"  # floats uniform in [0, 1), integers uniform in [0, 100)
    ZEROS = "zeros"
    ONES = "ones"
    ARANGE = "arange"
    COPY = "copy"  # ``init = "copy:NAME"``: a copy of array argument NAME's initial data
    DATA = "data"  # the array the spec gives (``data``; in TOML/YAML a ``file``)


@dataclass(frozen=True)
class ArrayArg:
    """A global-memory array. ``dtype`` and each entry of ``shape`` are expressions.
    A ``constant`` array is a read-only input in constant memory: an OpenCL ``__constant``
    parameter, or in CUDA a ``__constant__`` array of the same name that the backend fills
    before each launch (Kernel Tuner's ``cmem_args``)."""

    name: str
    dtype: str
    shape: tuple[str, ...]
    init: Init = Init.RANDOM
    output: bool = False
    constant: bool = False
    # ---- verification and inputs (issue 26; checked in _core/checking.py) ----
    atol: float | None = None  # this output matches when |out - expected| <= atol + rtol*|expected|
    rtol: float | None = None
    ignore: bool = False  # an output never compared (Kernel Tuner's None in ``answer``)
    data: np.ndarray | None = field(default=None, compare=False, repr=False)
    copy_of: str = ""  # set by ``init = "copy:NAME"``

    if TYPE_CHECKING:  # what __post_init__ takes and converts (the fields are the results)

        def __init__(
            self, name: str, dtype: str, shape: str | int | Sequence[str | int],
            init: Init | str = Init.RANDOM, output: bool = False, constant: bool = False,
            atol: float | None = None, rtol: float | None = None, ignore: bool = False,
            data: np.ndarray | None = None, copy_of: str = "",
        ) -> None: ...  # fmt: skip

    def __post_init__(self) -> None:
        shape = (self.shape,) if isinstance(self.shape, str | int) else tuple(self.shape)
        object.__setattr__(self, "shape", tuple(str(s) for s in shape))
        try:
            object.__setattr__(self, "init", Init(checking.array_fields(self, self.init)))
        except ValueError:
            raise SpecError(
                f"argument {self.name}: init {self.init!r} must be one of random, zeros, ones, "
                "arange or copy:NAME"
            ) from None
        for flag in ("output", "constant"):
            if not isinstance(getattr(self, flag), bool | np.bool_):
                raise SpecError(
                    f"argument {self.name}: {flag} must be true or false, got {getattr(self, flag)!r}"
                )
        if self.output and self.constant:
            raise SpecError(
                f"argument {self.name}: constant memory is read-only; drop output or constant"
            )


@dataclass(frozen=True)
class ScalarArg:
    """A scalar argument whose value is an expression of the problem."""

    name: str
    dtype: str
    value: str

    if TYPE_CHECKING:

        def __init__(self, name: str, dtype: str, value: str | int | float) -> None: ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", str(self.value))


@dataclass(frozen=True)
class LocalArg:
    """A ``__local`` buffer passed at launch (CUDA: dynamic shared memory) of ``count``
    elements; its bytes count towards the kernel's local-memory footprint automatically."""

    name: str
    dtype: str
    count: str

    if TYPE_CHECKING:

        def __init__(self, name: str, dtype: str, count: str | int) -> None: ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", str(self.count))


Arg = Union[ArrayArg, ScalarArg, LocalArg]  # noqa: UP007 (isinstance needs a tuple anyway)
ARG_TYPES = (ArrayArg, ScalarArg, LocalArg)


def describe_arg(a: Arg) -> dict[str, Any]:
    if isinstance(a, ArrayArg):
        return (
            {
                "kind": "array",
                "name": a.name,
                "dtype": a.dtype,
                "shape": list(a.shape),
                "init": a.init.value,
                "output": a.output,
            }
            | ({"constant": True} if a.constant else {})
            | checking.describe_array(a)
        )
    if isinstance(a, ScalarArg):
        return {"kind": "scalar", "name": a.name, "dtype": a.dtype, "value": a.value}
    return {"kind": "local", "name": a.name, "dtype": a.dtype, "count": a.count}
