"""Compare a kernel's outputs with the expected ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core import ArrayArg, Check, KernelSpec, Problem
from perfport.measure.data import array_layout

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


@dataclass(frozen=True)
class Comparison:
    """How a kernel's outputs are judged against the expected ones, for ``perfport tune``
    (``TrialEngine``, ``Runner``) and ``perfport split`` alike: the ignored outputs left
    out, then the spec's verify function where it has one, else ``mismatch`` with the
    spec's tolerance (default: the least precise floating type among all the arrays, as a
    float computation written to a double output is only float-accurate) and each output's
    atol/rtol."""

    tolerance: float | None
    bounds: Bounds
    ignored: frozenset[str]
    verify: Callable[..., Any] | None = None

    @classmethod
    def of(cls, spec: KernelSpec, problem: Problem) -> Comparison:
        """The comparison ``spec`` declares, at ``problem`` (where the arrays' types are)."""
        env = spec.env({}, spec.problem.merged(problem))
        arrays = [a for a in spec.args if isinstance(a, ArrayArg)]
        floats = [
            default_tolerance(dtype)
            for dtype in (array_layout(spec, a, env)[1] for a in arrays)
            if np.issubdtype(dtype, np.floating)
        ]
        tolerance = spec.tolerance if spec.tolerance is not None else max(floats, default=None)
        outputs = [a for a in arrays if a.output]
        bounds = {
            a.name: (a.atol or 0.0, a.rtol or 0.0)
            for a in outputs
            if a.atol is not None or a.rtol is not None
        }
        ignored = frozenset(a.name for a in outputs if a.ignore)
        return cls(tolerance, bounds, ignored, spec.verify)

    def mismatch(
        self, outputs: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray]
    ) -> str | None:
        """None when ``outputs`` pass against ``expected``; else why not, in one line."""
        want = compared(expected, self.ignored)
        if self.verify is not None:
            return verify_failure(self.verify, want, compared(outputs, self.ignored))
        return mismatch(outputs, want, self.tolerance, self.bounds)

    def check(self, expected: Mapping[str, np.ndarray]) -> Check:
        """``VERIFIED`` when ``mismatch`` compares something with ``expected`` (a verify
        function, or an output not ignored); else ``UNVERIFIED``: every output is ignored, so
        nothing is compared and ``mismatch`` passes anything (tune says "not verified")."""
        compares = self.verify is not None or bool(compared(expected, self.ignored))
        return Check.VERIFIED if compares else Check.UNVERIFIED
