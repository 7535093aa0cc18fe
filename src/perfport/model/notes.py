"""Approximation notes loopy does not give, read from a preprocessed kernel's instructions
(``gather`` adds them to ``KernelStats.approximations``). loopy warns when it sums both
branches of a conditional expression's operations, but not that it counts the memory
accesses of both branches too, nor that an instruction under a predicate counts as if every
work-item ran it; these are what the instructions show, so the notes are never wrong."""

from __future__ import annotations

from typing import Any

CONDITIONAL = "memory access counts: both branches of a conditional counted (each branch's loads)"
PREDICATED = (
    "operation and memory access counts: an instruction under a predicate (if) counted as if "
    "every work-item ran it"
)


def structural_notes(knl: Any) -> list[str]:
    """The notes for ``knl`` (a loopy LoopKernel, preprocessed)."""
    notes = []
    if any(_has_conditional(getattr(insn, "expression", None)) for insn in knl.instructions):
        notes.append(CONDITIONAL)
    if any(getattr(insn, "predicates", None) for insn in knl.instructions):
        notes.append(PREDICATED)
    return notes


def _has_conditional(expression: Any) -> bool:
    from pymbolic.mapper import WalkMapper
    from pymbolic.primitives import If

    if expression is None:
        return False
    found = []

    class _Finder(WalkMapper):
        def visit(self, expr: Any, *args: Any, **kwargs: Any) -> bool:
            if isinstance(expr, If):
                found.append(expr)
            return not found

    try:
        _Finder()(expression)
    except Exception:  # an expression pymbolic cannot walk: no note rather than a failure
        return False
    return bool(found)
