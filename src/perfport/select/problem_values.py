"""A problem as a selector's caller gives it, in the kernel's own types: the one rule by
which ``Dispatcher`` and ``perfport select predict`` take a problem.

A selector reads numbers, as the data it was fitted on holds them: a flag as 0 or 1 and every
size as a float (``PerfTable.problem_dict``, ``metadata.fixed_problem``, the generated
``selector.py``). The kernel wants its own types back: ``trans_a`` a bool, ``M`` an int. So a
number that means one of the kernel's values is taken as that value (0 or 1 as a flag, a
whole number such as 512.0 as an integer), numpy scalars as Python values, and anything else
is refused in one line, before the selector answers, whichever way the problem came in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perfport._core import KernelSpec, Problem, SpecError, Value
from perfport.select.errors import SelectError


def typed_values(spec: KernelSpec, problem: Mapping[str, Any]) -> dict[str, Value]:
    """``problem``'s values in the types of ``spec``'s problem values: 0 or 1 (of any number
    type) for a flag as false or true, a whole number for an integer as that integer, numpy
    scalars as Python values. A value that is none of what its name takes is a one-line
    SelectError naming the name, the value and what it takes; a name the kernel lacks is
    left as given (``resolve_problem`` names the kernel's)."""
    try:
        given = Problem.of(problem)
    except SpecError as exc:
        raise SelectError(str(exc)) from None
    return {name: _typed(spec, name, value) for name, value in given.items()}


def _typed(spec: KernelSpec, name: str, value: Value) -> Value:
    if name not in spec.problem:
        return value
    default = spec.problem[name]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, bool):
        if isinstance(value, bool) or (number and value in (0, 1)):
            return bool(value)
        takes = "true or false, or 0 or 1"
    elif isinstance(default, int):
        # A float's is_integer, not float(value): an int past any double is still an int.
        if number and (not isinstance(value, float) or value.is_integer()):
            return int(value)
        takes = "an integer, or a whole number such as 512.0"
    elif isinstance(default, float):
        if number:  # finite: Problem.of refuses NaN and the infinities
            return value
        takes = "a finite number"
    elif isinstance(value, str):
        return value
    else:
        takes = "a name"
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise SelectError(f"kernel {spec.name}: problem value {name} must be {takes} "
                      f"(default {default!r}), got {shown}")  # fmt: skip
