"""Compare a kernel's outputs with the expected ones."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

_DEFAULT_TOLERANCE = {2: 1e-2, 4: 1e-3, 8: 1e-9}  # by float itemsize; integers must match


def default_tolerance(dtype: np.dtype) -> float:
    return (
        _DEFAULT_TOLERANCE.get(dtype.itemsize, 1e-3) if np.issubdtype(dtype, np.floating) else 0.0
    )


def mismatch(
    outputs: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], tolerance: float | None
) -> str | None:
    """None when every output matches; else a one-line description of the first mismatch.

    Floats match when max|out - expected| <= tolerance * max|expected| (relative to the
    largest value, so that sums in a different order pass and wrong elements do not).
    """
    for name, want in expected.items():
        got = outputs.get(name)
        if got is None:
            return f"output {name!r} is not an output array of the kernel"
        want = np.asarray(want)
        if got.size != want.size:
            return f"output {name!r} has {got.size} elements, the reference {want.size}"
        got, want = got.reshape(-1), want.reshape(-1)
        if np.issubdtype(got.dtype, np.floating) or np.issubdtype(want.dtype, np.floating):
            tol = default_tolerance(got.dtype) if tolerance is None else tolerance
            problem = _float_mismatch(name, got, want, tol)
        else:
            problem = _exact_mismatch(name, got, want)
        if problem:
            return problem
    return None


def _float_mismatch(name: str, got: np.ndarray, want: np.ndarray, tol: float) -> str | None:
    work = np.result_type(got.dtype, want.dtype, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got.astype(work, copy=False) - want.astype(work, copy=False))
        worst = int(np.argmax(error))  # the first NaN, if there is one
        scale = float(np.max(np.abs(want)))
    if not (np.isfinite(error[worst]) and np.isfinite(scale)):
        return _nonfinite_mismatch(name, got.astype(np.float64), want.astype(np.float64), tol)
    scale = max(scale, 1e-30)
    if error[worst] > tol * scale:
        return (
            f"output {name!r}[{worst}] is {got[worst]:.6g}, expected {want[worst]:.6g} "
            f"(error {error[worst] / scale:.2e} of max |expected| > tolerance {tol:g})"
        )
    return None


def _nonfinite_mismatch(name: str, g: np.ndarray, w: np.ndarray, tol: float) -> str | None:
    """The slow path: NaN or infinity somewhere. Non-finite expected values must be matched
    exactly (NaN by NaN); finite ones as usual."""
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    finite = np.isfinite(w)
    bad = ~same & ~finite | (finite & ~np.isfinite(g))
    if bad.any():
        i = int(np.argmax(bad))
        return f"output {name!r}[{i}] is {g[i]}, expected {w[i]}"
    return _float_mismatch(name, g[finite], w[finite], tol) if finite.any() else None


def _exact_mismatch(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    diff = got != want
    if diff.any():
        i = int(np.argmax(diff))
        return f"output {name!r}[{i}] is {got[i]}, expected {want[i]} ({int(diff.sum())} elements differ)"
    return None
