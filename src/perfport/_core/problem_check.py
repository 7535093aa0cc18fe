"""A problem as a caller gives it, checked against the kernel's problem values: every layer
that takes one (the space, tuning, prediction, dispatch) refuses the same things alike."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from perfport._core.errors import SpecError
from perfport._core.records import Problem
from perfport._core.spec import KernelSpec


def resolve_problem(spec: KernelSpec, problem: Mapping[str, Any] | None) -> Problem:
    """The kernel's default problem updated with ``problem``; unknown names are an error."""
    given = dict(Problem.of(problem))  # numpy scalars as Python values, as a KernelSpec takes
    unknown = set(given) - set(spec.problem)
    if unknown:
        known = ", ".join(spec.problem) or "none"
        raise SpecError(
            f"kernel {spec.name} has no problem value {', '.join(sorted(unknown))}; its problem values: {known}"
        )
    for name, value in given.items():
        _check_problem_value(spec, name, value, spec.problem[name])
    merged = spec.problem.merged(given)
    # A reference that knows the problems its kernel is defined for (a stencil's, whose borders
    # cannot be negative) refuses the others here, not deep inside its first verification.
    refused = getattr(spec.reference, "refused_problem", None)
    if refused is not None and (why := refused(merged)):
        raise SpecError(f"kernel {spec.name}: {why}")
    return merged


def _check_problem_value(spec: KernelSpec, name: str, value: Any, default: Any) -> None:
    """A given problem value has its default's type (an integer size stays an integer): a
    wrong one would otherwise be stored, or fail deep inside a build."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, kind = number and isinstance(value, int), "an integer"
    elif isinstance(default, float):
        ok, kind = number and _finite(value), "a finite number"
    else:
        ok, kind = isinstance(value, str), "a name"
    if not ok:
        raise SpecError(
            f"kernel {spec.name}: problem value {name} must be {kind} (default {default!r}), "
            f"got {value!r}"
        )


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past any double
        return False


def typed_as(stored: Any, text: str) -> bool:
    """Whether a stored problem value equals the number typed as ``text`` on a command line
    (a stored a=2.0 for a=2); compare the text first, where a store may hold both."""
    if isinstance(stored, bool) or not isinstance(stored, int | float):
        return False
    try:
        return float(text) == stored
    except (ValueError, OverflowError):
        return False
