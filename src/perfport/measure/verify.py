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
        tol = default_tolerance(got.dtype) if tolerance is None else tolerance
        if np.issubdtype(got.dtype, np.floating) or np.issubdtype(want.dtype, np.floating):
            g, w = got.astype(np.float64), want.astype(np.float64)
            bad_nan = np.isfinite(w) & ~np.isfinite(g)
            if bad_nan.any():
                i = int(np.argmax(bad_nan))
                return f"output {name!r}[{i}] is {g[i]} where {w[i]} was expected"
            error = np.abs(g - w)
            scale = max(float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)), 1e-30)
            worst = int(np.argmax(error))
            if error[worst] > tol * scale:
                return (
                    f"output {name!r}[{worst}] is {g[worst]:.6g}, expected {w[worst]:.6g} "
                    f"(error {error[worst] / scale:.2e} of max |expected| > tolerance {tol:g})"
                )
        else:
            diff = got != want
            if diff.any():
                i = int(np.argmax(diff))
                return f"output {name!r}[{i}] is {got[i]}, expected {want[i]} ({int(diff.sum())} elements differ)"
    return None
