"""Host data for a kernel's arguments, built from the spec and the seed."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from perfport._core import ArrayArg, Expr, Init, KernelSpec, ScalarArg, SpecError
from perfport._core.dtypes import numpy_dtype

_MAX_ELEMENTS = 1 << 34


def host_arrays(spec: KernelSpec, env: Mapping[str, Any], seed: int) -> dict[str, np.ndarray]:
    """Every array argument, filled per its ``init`` from a generator seeded by (seed, name)."""
    out: dict[str, np.ndarray] = {}
    for a in spec.args:
        if not isinstance(a, ArrayArg):
            continue
        dtype = numpy_dtype(Expr(a.dtype, spec.name).value(env))
        shape = tuple(int(Expr(s, f"argument {a.name} shape").value(env)) for s in a.shape)
        if any(n < 1 for n in shape) or int(np.prod(shape, dtype=np.int64)) > _MAX_ELEMENTS:
            raise SpecError(f"kernel {spec.name}: argument {a.name} has an unusable shape {shape}")
        out[a.name] = _fill(
            a.init, shape, dtype, np.random.default_rng([seed, zlib.crc32(a.name.encode())])
        )
    return out


def _fill(
    init: Init, shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator
) -> np.ndarray:
    if init is Init.ZEROS:
        return np.zeros(shape, dtype)
    if init is Init.ONES:
        return np.ones(shape, dtype)
    if init is Init.ARANGE:
        return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 100, size=shape).astype(dtype)
    return rng.random(shape, dtype=np.float64).astype(dtype)


def scalar_value(spec: KernelSpec, arg: ScalarArg, env: Mapping[str, Any]) -> np.generic:
    dtype = numpy_dtype(Expr(arg.dtype, spec.name).value(env))
    return dtype.type(Expr(arg.value, f"argument {arg.name} value").value(env))


def reference_outputs(
    spec: KernelSpec, problem: Mapping[str, Any], seed: int
) -> dict[str, np.ndarray]:
    """The outputs the spec's numpy reference expects for the seeded inputs, in this process.
    A reference that fails or returns something unusable is a SpecError."""
    assert spec.reference is not None
    full = spec.problem.merged(problem)
    inputs = host_arrays(spec, spec.env({}, full), seed)
    try:
        result = {str(k): np.asarray(v) for k, v in dict(spec.reference(full, inputs)).items()}
    except Exception as exc:
        raise SpecError(
            f"kernel {spec.name}: the numpy reference raised {type(exc).__name__}: {exc}"
        ) from None
    outputs = {a.name for a in spec.args if isinstance(a, ArrayArg) and a.output}
    if not result or set(result) - outputs:
        raise SpecError(
            f"kernel {spec.name}: the numpy reference returned {sorted(result)}; "
            f"it must return some of the output arrays {sorted(outputs)}"
        )
    return result
