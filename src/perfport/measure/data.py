"""Host data for a kernel's arguments, built from the spec and the seed."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from perfport._core import ArrayArg, Config, Expr, Init, KernelSpec, Param, ScalarArg, SpecError
from perfport._core.checking import check_array_data
from perfport._core.dtypes import numpy_dtype

_MAX_ELEMENTS = 1 << 34


def host_arrays(spec: KernelSpec, env: Mapping[str, Any], seed: int) -> dict[str, np.ndarray]:
    """Every array argument, filled per its ``init`` from a generator seeded by (seed, name),
    given (``data``, checked against the declared shape and type) or copied from another."""
    out: dict[str, np.ndarray] = {}
    arrays = [a for a in spec.args if isinstance(a, ArrayArg)]
    for a in arrays:
        shape, dtype = array_layout(spec, a, env)
        if a.init is Init.DATA:
            check_array_data(spec.name, a, shape, dtype, env)
            assert a.data is not None
            out[a.name] = np.array(a.data, copy=True)  # a kernel writing it must not change it
        elif a.init is not Init.COPY:
            rng = np.random.default_rng([seed, zlib.crc32(a.name.encode())])
            out[a.name] = _fill(a.init, shape, dtype, rng)
    for a in arrays:  # copies last, so that the array they copy is filled
        if a.init is Init.COPY:
            shape, dtype = array_layout(spec, a, env)
            source = out[a.copy_of]
            if source.shape != shape:
                raise SpecError(
                    f"kernel {spec.name}: argument {a.name} has shape {list(shape)} but copies "
                    f"{a.copy_of} of shape {list(source.shape)}; declare the same shape"
                )
            out[a.name] = source.astype(dtype, copy=True)
    return out


def array_layout(
    spec: KernelSpec, a: ArrayArg, env: Mapping[str, Any]
) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and element type of array argument ``a`` at ``env``."""
    dtype = numpy_dtype(Expr(a.dtype, spec.name).value(env))
    shape = tuple(int(Expr(s, f"argument {a.name} shape").value(env)) for s in a.shape)
    if any(n < 1 for n in shape) or int(np.prod(shape, dtype=np.int64)) > _MAX_ELEMENTS:
        raise SpecError(f"kernel {spec.name}: argument {a.name} has an unusable shape {shape}")
    return shape, dtype


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
        returned: Any = spec.reference(full, inputs)
        result = None  # a bare array, even for one output: the dict is the one form
        if isinstance(returned, Mapping):
            result = {str(k): np.asarray(v) for k, v in returned.items()}
    except Exception as exc:
        raise SpecError(
            f"kernel {spec.name}: the numpy reference raised {type(exc).__name__}: {exc}"
        ) from None
    outputs = {a.name for a in spec.args if isinstance(a, ArrayArg) and a.output}
    if result is None:
        form = ", ".join(f"{name!r}: array" for name in sorted(outputs))
        raise SpecError(
            f"kernel {spec.name}: the numpy reference returned {type(returned).__name__}, not "
            f"a dict; return each output array by its argument name: {{{form}}}"
        )
    if not result or set(result) - outputs:
        raise SpecError(
            f"kernel {spec.name}: the numpy reference returned {sorted(result)}; "
            f"it must return some of the output arrays {sorted(outputs)}"
        )
    env = spec.env({}, full)
    for a in spec.args:  # a reference of the wrong size is its own bug: no trial could match it
        if isinstance(a, ArrayArg) and a.name in result:
            shape, dtype = array_layout(spec, a, env)
            if result[a.name].size != int(np.prod(shape)):
                raise SpecError(
                    f"kernel {spec.name}: the numpy reference returned {a.name} with "
                    f"{result[a.name].size} elements; the spec declares {dtype}{list(shape)}"
                )
            if spec.verify is None and not (a.ignore or a.atol is not None or a.rtol is not None):
                _check_whole(spec.name, a.name, dtype, result[a.name])
    return result


def _check_whole(kernel: str, name: str, dtype: np.dtype, want: np.ndarray) -> None:
    """An integer output is compared exactly: a float reference for it that is not whole
    numbers could never match, which is the reference's bug, not every configuration's."""
    if np.issubdtype(dtype, np.floating) or not np.issubdtype(want.dtype, np.inexact):
        return
    flat = want.reshape(-1)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(flat) & (flat == np.round(flat))
    if whole.all():
        return
    i = int(np.argmin(whole))
    raise SpecError(
        f"kernel {kernel}: the numpy reference returned {name}[{i}] = {flat[i]}, not a whole "
        f"number, for the {dtype} output {name}, which is compared exactly; round in the "
        f"reference (np.rint) or give {name} an atol"
    )


def reference_spec(spec: KernelSpec) -> KernelSpec:
    """The spec's reference kernel as a kernel of one configuration, with the tuned kernel's
    arguments and problem, so that it sees the same inputs."""
    rk = spec.reference_kernel
    assert rk is not None
    config = rk.config or spec.default or Config()
    params = tuple(Param(p.name, (config[p.name],), p.kind, p.define) for p in spec.params)
    return dataclasses.replace(
        spec,
        name=f"{spec.name} (reference kernel)",
        source=rk.source,
        entry=rk.entry,
        language=rk.language or spec.language,
        params=params,
        global_size=rk.global_size or spec.global_size,
        local_size=rk.local_size or spec.local_size,
        restrictions=(),
        default=config,
        reference=None,
        verify=None,
        reference_kernel=None,
    )
