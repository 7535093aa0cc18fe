"""Compare a kernel's outputs with the expected ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

# Per output: (atol, rtol) where the spec gives either (the other is then 0).
Bounds = Mapping[str, tuple[float, float]]

_DEFAULT_TOLERANCE = {2: 1e-2, 4: 1e-3, 8: 1e-9}  # by float itemsize; integers must match


def default_tolerance(dtype: np.dtype) -> float:
    return (
        _DEFAULT_TOLERANCE.get(dtype.itemsize, 1e-3) if np.issubdtype(dtype, np.floating) else 0.0
    )


def mismatch(
    outputs: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    tolerance: float | None,
    bounds: Bounds | None = None,
) -> str | None:
    """None when every output matches; else a one-line description of the first mismatch.

    Floats match when max|out - expected| <= tolerance * max|expected| (relative to the
    largest value, so that sums in a different order pass and wrong elements do not). An
    integer output matches only exactly, even where the expected values are floats. An
    output with ``bounds`` matches elementwise when |out - expected| <= atol + rtol*|expected|
    (numpy's ``allclose``, NaN matching NaN), integers included.
    """
    for name, want in expected.items():
        got = outputs.get(name)
        if got is None:
            return f"output {name!r} is not an output array of the kernel"
        want = np.asarray(want)
        if got.size != want.size:
            return f"output {name!r} has {got.size} elements, the reference {want.size}"
        got, want = got.reshape(-1), want.reshape(-1)
        if bounds and name in bounds:
            problem = _bounded_mismatch(name, got, want, *bounds[name])
        # The output's type decides: a float reference must not loosen an integer output.
        elif np.issubdtype(got.dtype, np.floating):
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


def _bounded_mismatch(
    name: str, got: np.ndarray, want: np.ndarray, atol: float, rtol: float
) -> str | None:
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    i = int(np.argmin(close))
    return (
        f"output {name!r}[{i}] is {got[i]:.6g}, expected {want[i]:.6g} (error "
        f"{abs(g[i] - w[i]):.3g} > atol {atol:g} + rtol {rtol:g} * |expected|; "
        f"{int((~close).sum())} elements differ)"
    )


def nonfinite_output(outputs: Mapping[str, np.ndarray]) -> str | None:
    """The first float output without a single finite value, or None. Such outputs cannot be
    the expected ones: every configuration that computes finite values would fail them."""
    for name, out in outputs.items():
        if np.issubdtype(out.dtype, np.floating) and out.size and not np.isfinite(out).any():
            return name
    return None


def compared(outputs: Mapping[str, np.ndarray], ignored: frozenset[str]) -> dict[str, Any]:
    """The outputs that are compared: all but the ignored ones."""
    return {k: v for k, v in outputs.items() if k not in ignored}


def verify_failure(
    verify: Callable[..., Any],
    expected: Mapping[str, np.ndarray],
    actual: Mapping[str, np.ndarray],
) -> str | None:
    """Run a spec's verify function: None when it says True; else why not, in one line (it
    returned False or something else, or raised)."""
    try:
        answer = verify(expected, actual)
    except Exception as exc:
        text = " ".join(str(exc).split())[:300]
        return f"the verify function raised {type(exc).__name__}: {text}"
    if isinstance(answer, bool | np.bool_):
        return None if answer else "the verify function returned False"
    return f"the verify function returned {type(answer).__name__}, not True or False"
