"""What a spec says about checking outputs and providing inputs, beyond the elementwise
numpy reference (issue 26): per-output tolerances and ignored outputs, a verify function, a
reference computed by another kernel, given arrays and arrays copied from another argument.

The records live here and ``spec.py`` holds them; the checks of a whole spec are functions
here so that ``spec.py`` stays readable.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfport._core.errors import SpecError
from perfport._core.identifiers import is_identifier
from perfport._core.records import Config, Language

# verify(expected outputs, actual outputs) -> whether the configuration is correct. Both by
# argument name, ignored outputs left out (Kernel Tuner's ``verify=``).
Verify = Callable[[Mapping[str, np.ndarray], Mapping[str, np.ndarray]], bool]

COPY_PREFIX = "copy:"


@dataclass(frozen=True)
class ReferenceKernel:
    """A kernel whose outputs are the expected ones: run once per problem on the campaign's
    device, from the same inputs (it takes the same arguments). ``config`` sets the tuned
    kernel's parameters for its build and launch (default: the kernel's default
    configuration); ``global_size``/``local_size`` replace the kernel's own when given."""

    source: str
    entry: str
    config: Config = field(default_factory=Config)  # a mapping is accepted too
    global_size: tuple[str, ...] = ()
    local_size: tuple[str, ...] = ()
    language: Language | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not self.source.strip():
            raise SpecError("reference kernel: 'source' is empty; give the reference's code")
        if not is_identifier(self.entry):
            raise SpecError(f"reference kernel: entry {self.entry!r} must be an identifier")
        if not isinstance(self.config, Mapping):
            raise SpecError("reference kernel: 'config' must be a table of parameter values")
        object.__setattr__(self, "config", Config.of(self.config))
        for key in ("global_size", "local_size"):
            value = getattr(self, key)
            value = (value,) if isinstance(value, str | int) else tuple(value)
            object.__setattr__(self, key, tuple(str(v) for v in value))
        if self.language is not None:
            try:
                object.__setattr__(self, "language", Language(self.language))
            except ValueError:
                raise SpecError(
                    f"reference kernel: language {self.language!r} must be one of "
                    f"{', '.join(m.value for m in Language)}"
                ) from None

    def describe(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "source_sha256": hashlib.sha256(self.source.encode()).hexdigest(),
            "config": dict(self.config),
            "global_size": list(self.global_size),
            "local_size": list(self.local_size),
            "language": None if self.language is None else self.language.value,
        }


def array_fields(arg: Any, init: Any) -> Any:
    """Normalise an array argument's issue-26 fields; returns its ``init`` with ``copy:NAME``
    split off into ``copy_of`` and given data marked as such."""
    what = f"argument {arg.name}"
    set_ = object.__setattr__
    if isinstance(init, str) and init.startswith(COPY_PREFIX):
        set_(arg, "copy_of", init[len(COPY_PREFIX) :].strip())
        init = "copy"
    if getattr(init, "value", init) == "copy" and not arg.copy_of:
        raise SpecError(f"{what}: init copy needs the array to copy: init = 'copy:NAME'")
    for key in ("atol", "rtol"):
        value = getattr(arg, key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0
        ):
            raise SpecError(f"{what}: {key} must be a number >= 0, got {value!r}")
    if not isinstance(arg.ignore, bool | np.bool_):
        raise SpecError(f"{what}: ignore must be true or false, got {arg.ignore!r}")
    if (arg.atol is not None or arg.rtol is not None or arg.ignore) and not arg.output:
        raise SpecError(
            f"{what}: atol, rtol and ignore apply to output arrays; set output = true or drop them"
        )
    if arg.data is not None:
        data = np.asarray(arg.data)
        if data.dtype.kind not in "biuf":
            raise SpecError(f"{what}: data must be a numeric numpy array, got dtype {data.dtype}")
        set_(arg, "data", data)
        if arg.copy_of:
            raise SpecError(f"{what}: give data or init = 'copy:...', not both")
        init = "data"
    elif init == "data":
        raise SpecError(f"{what}: init 'data' needs the array (data=..., or file = 'x.npy')")
    return init


def check_spec(spec: Any) -> None:
    """Raise SpecError for issue-26 fields that do not fit the rest of ``spec`` (a
    KernelSpec; spec.py imports this module, not the other way round)."""
    what = f"kernel {spec.name}"
    arrays = {a.name: a for a in spec.args if hasattr(a, "copy_of")}
    for a in arrays.values():
        if not a.copy_of:
            continue
        source = arrays.get(a.copy_of)
        if source is None or source is a:
            raise SpecError(
                f"{what}: argument {a.name}: init 'copy:{a.copy_of}' names no other array "
                f"argument; arrays: {', '.join(sorted(arrays))}"
            )
        if source.copy_of:
            raise SpecError(
                f"{what}: argument {a.name} copies {source.name}, itself a copy; copy "
                f"{source.copy_of} instead"
            )
    if spec.verify is not None and not callable(spec.verify):
        raise SpecError(f"{what}: verify must be a function (expected, actual) -> bool")
    rk = spec.reference_kernel
    if rk is not None and not isinstance(rk, ReferenceKernel):
        raise SpecError(f"{what}: reference_kernel must be a ReferenceKernel, got {rk!r}")
    if (spec.verify is not None or rk is not None) and not any(a.output for a in arrays.values()):
        raise SpecError(f"{what}: verification needs at least one output array (output=true)")
    if rk is None:
        return
    if spec.reference is not None:
        raise SpecError(f"{what}: give a numpy reference or a reference kernel, not both")
    if not rk.config and spec.default is None and spec.params:
        raise SpecError(
            f"{what}: the reference kernel needs a configuration: give it 'config', or give the "
            "kernel a default"
        )
    if rk.config:
        spec.check_config(rk.config, f"{what}: reference kernel config")
    if len(rk.global_size) != len(rk.local_size):
        raise SpecError(
            f"{what}: the reference kernel needs global_size and local_size together, with "
            "the same number of dimensions"
        )


def callable_name(f: Any) -> str:
    """``module:qualname`` of a reference or verify function, as descriptions show it."""
    return f"{getattr(f, '__module__', '?')}:{getattr(f, '__qualname__', type(f).__name__)}"


def describe_checks(spec: Any) -> dict[str, Any]:
    """A spec's issue-26 keys, only where set: existing kernels keep their campaign keys."""
    out: dict[str, Any] = {}
    if spec.verify is not None:
        out["verify"] = callable_name(spec.verify)
    if spec.reference_kernel is not None:
        out["reference_kernel"] = spec.reference_kernel.describe()
    return out


def describe_array(arg: Any) -> dict[str, Any]:
    """The issue-26 keys of an array argument's description, only those set (so that
    existing kernels keep their campaign keys)."""
    out: dict[str, Any] = {}
    if arg.atol is not None:
        out["atol"] = arg.atol
    if arg.rtol is not None:
        out["rtol"] = arg.rtol
    if arg.ignore:
        out["ignore"] = True
    if arg.copy_of:
        out["init"] = COPY_PREFIX + arg.copy_of
    if arg.data is not None:
        data = np.ascontiguousarray(arg.data)
        digest = hashlib.sha256(data.tobytes() + str(data.dtype).encode()).hexdigest()
        out["data"] = {"shape": list(data.shape), "dtype": str(data.dtype), "sha256": digest}
    return out


def check_array_data(
    spec_name: str, arg: Any, shape: Sequence[int], dtype: np.dtype, env: Mapping[str, Any]
) -> None:
    """A given array must have the argument's shape and element type at this problem."""
    data = arg.data
    assert data is not None
    if tuple(data.shape) != tuple(shape) or data.dtype != dtype:
        sizes = ", ".join(f"{k}={v}" for k, v in env.items() if isinstance(v, int))
        raise SpecError(
            f"kernel {spec_name}: argument {arg.name}: the given array is {data.dtype}"
            f"{list(data.shape)}, the spec declares {dtype}{list(shape)} here ({sizes}); "
            "give an array of that shape and type, or change the declaration"
        )
    if math.prod(shape) < 1:
        raise SpecError(f"kernel {spec_name}: argument {arg.name}: the given array is empty")
