"""Whether a kernel can launch at all at a problem: checked before anything runs or is stored,
so a problem no run could use (``--problem width=-5``) leaves the results database as it was."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from perfport._core.args import ArrayArg
from perfport._core.checking import check_array_data
from perfport._core.dtypes import numpy_dtype
from perfport._core.errors import SpecError
from perfport._core.expr import Expr
from perfport._core.spec import KernelSpec

MAX_ARRAY_BYTES = 1 << 40  # no device at hand: still no arrays beyond a terabyte


def check_launch(
    spec: KernelSpec,
    config: Mapping[str, Any],
    problem: Mapping[str, Any],
    memory_bytes: int | None = None,
) -> None:
    """Raise SpecError unless ``config`` at ``problem`` launches: every global and local size
    and every array dimension at least 1, and the arrays together within ``memory_bytes`` (a
    device's global memory; None: MAX_ARRAY_BYTES)."""
    env = spec.env(config, problem)
    geometry = spec.geometry(env)
    where = f"kernel {spec.name}"
    if min(geometry.global_size + geometry.local_size) < 1:
        raise SpecError(
            f"{where}: launch sizes global {geometry.global_size}, local "
            f"{geometry.local_size} must all be at least 1; give other problem values"
        )
    total, shapes = 0, {}
    for a in spec.args:
        if isinstance(a, ArrayArg):
            shape = tuple(int(Expr(e, f"argument {a.name} shape").value(env)) for e in a.shape)
            if any(n < 1 for n in shape):
                raise SpecError(
                    f"{where}: argument {a.name} would have shape {shape}; every size must be "
                    "at least 1, give other problem values"
                )
            dtype = numpy_dtype(Expr(a.dtype, spec.name).value(env))
            if a.data is not None:  # a given array must fit its declaration
                check_array_data(spec.name, a, shape, dtype, env)
            total += math.prod(shape) * dtype.itemsize
            shapes[a.name] = shape
    for a in spec.args:
        if isinstance(a, ArrayArg) and a.copy_of and shapes[a.name] != shapes[a.copy_of]:
            raise SpecError(
                f"{where}: argument {a.name} has shape {list(shapes[a.name])} but copies "
                f"{a.copy_of} of shape {list(shapes[a.copy_of])}; declare the same shape"
            )
    limit = MAX_ARRAY_BYTES if memory_bytes is None else memory_bytes
    if total > limit:
        raise SpecError(
            f"{where}: the arrays need {total / 2**30:.3g} GiB, more than the "
            f"{limit / 2**30:.3g} GiB of memory there is; give a smaller problem"
        )
