"""Cost bounds for the two whitelisting evaluators (``expr`` and ``values``).

A whitelist of node types keeps code out, but not cost: ``(2**256)**256`` is a legal
expression whose value has 2 million bits, ``'a' * 10**10`` a legal one of 10 GB. Every
operation here checks the size of what it would produce *before* producing it, so a crafted
input ends in a one-line ExpressionError within milliseconds instead of a stall or a crash.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

MAX_BITS = 4096  # integers: no size, count or footprint needs more (1e1233)
MAX_EXPONENT = 256  # of an integer power: 2**256 is past any size; a float's may be larger
MAX_ITEMS = 1_000_000  # characters of a string, items of a list or tuple
MAX_DEPTH = 100  # nesting of an expression: the evaluators recurse once per level
# Items of the strings and lists built while one space is enumerated (each at most MAX_ITEMS,
# but a grid of them ran for a minute): tens of milliseconds of building.
MAX_TOTAL_ITEMS = 10_000_000

_SEQUENCE = (str, list, tuple)


class CostError(ValueError):
    """An operation would build a value too large to be an input of a kernel."""

    def __init__(self, what: str, fix: str = "simplify it") -> None:
        super().__init__(f"{what}; no kernel input is that large, {fix}")


# The items still to spend while a space is enumerated (None: no budget, one value at a time).
_BUDGET: ContextVar[list[int] | None] = ContextVar("perfport_item_budget", default=None)


@contextmanager
def item_budget(limit: int = MAX_TOTAL_ITEMS) -> Iterator[None]:
    """Within it, the strings and lists that operations build share ``limit`` items in all,
    so a grid of a million large strings ends in a CostError instead of a stall."""
    token = _BUDGET.set([limit])
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _spend(value: Any) -> None:
    budget = _BUDGET.get()
    if budget is not None and isinstance(value, _SEQUENCE):
        budget[0] -= len(value)
        if budget[0] < 0:
            raise CostError(
                f"the strings and lists it builds over the whole space have more than "
                f"{MAX_TOTAL_ITEMS} items"
            )


def check_depth(tree: ast.AST, flat: tuple[type[ast.operator], ...] = ()) -> None:
    """Refuse an expression nested deeper than MAX_DEPTH (walked without recursion, so a
    thousand unary minus signs cannot raise RecursionError here). A chain of the ``flat``
    operators (``a + b - c``: each the left operand of the next) counts as one level, for an
    evaluator that does not recurse along it."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise CostError(f"nested more than {MAX_DEPTH} levels deep")
        for child in ast.iter_child_nodes(node):
            chained = child is getattr(node, "left", None) and _in_chain(node, flat)
            stack.append((child, depth + (not (chained and _in_chain(child, flat)))))


def _in_chain(node: ast.AST, flat: tuple[type[ast.operator], ...]) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, flat)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def size_of(value: Any) -> int:
    """The work a value stands for: its length for a sequence or range, else 1."""
    if isinstance(value, (*_SEQUENCE, range)):
        return len(value)
    return 1


def check_result(value: Any) -> Any:
    """``value``, unless it is larger than any input needs."""
    if _is_int(value) and value.bit_length() > MAX_BITS:
        raise CostError(f"an integer of more than {MAX_BITS} bits")
    if isinstance(value, _SEQUENCE) and len(value) > MAX_ITEMS:
        raise CostError(f"a string or list of more than {MAX_ITEMS} items")
    return value


def _check_power(base: Any, exponent: Any) -> None:
    # Only an integer power grows: a float's overflows (an error), 0, 1 and -1 stay small.
    if not (_is_int(base) and _is_int(exponent) and exponent > 0 and abs(base) > 1):
        return
    if exponent > MAX_EXPONENT:
        shown = f" ({exponent})" if exponent < 10**9 else ""
        raise CostError(
            f"an integer power's exponent is above {MAX_EXPONENT}{shown}",
            "simplify it, or write a float power, such as 2.0 ** 300 for 2 ** 300",
        )
    if (base.bit_length() - 1) * exponent > MAX_BITS:
        raise CostError(f"the power has more than {MAX_BITS} bits")


def _check_shift(value: Any, count: Any) -> None:
    if _is_int(value) and _is_int(count) and value and count > MAX_BITS:
        raise CostError(f"a shift by more than {MAX_BITS} bits")


def _check_repeat(left: Any, right: Any) -> None:
    for seq, times in ((left, right), (right, left)):
        if isinstance(seq, _SEQUENCE) and _is_int(times) and len(seq) * times > MAX_ITEMS:
            raise CostError(f"repeating gives more than {MAX_ITEMS} items")


def _check_concat(left: Any, right: Any) -> None:
    both = isinstance(left, _SEQUENCE) and isinstance(right, _SEQUENCE)
    if both and len(left) + len(right) > MAX_ITEMS:
        raise CostError(f"joining gives more than {MAX_ITEMS} items")


def _check_format(left: Any, right: Any) -> None:
    if isinstance(left, str):  # '%999999999d' % 1 is a gigabyte of spaces
        raise CostError("string formatting with % is not allowed")


_PRECHECKS: dict[type, Callable[[Any, Any], None]] = {
    ast.Pow: _check_power,
    ast.LShift: _check_shift,
    ast.Mult: _check_repeat,
    ast.Add: _check_concat,
    ast.Mod: _check_format,
}


_PLAIN = (int, float)
# Checks that can refuse two plain numbers; the others guard strings and sequences only.
_NUMBER_CHECKS = (ast.Pow, ast.LShift)


def bounded(op_type: type, op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``op`` on Python values, refusing before it computes a value too large."""
    check = _PRECHECKS.get(op_type)
    numbers_checked = check is not None and op_type in _NUMBER_CHECKS

    def apply(left: Any, right: Any) -> Any:
        # Plain floats and small ints (counts, sizes) are the common case: only a power or a
        # shift of them can grow past the bounds, and a float cannot at all.
        plain = type(left) in _PLAIN and type(right) in _PLAIN
        if check is not None and (numbers_checked or not plain):
            check(left, right)
        result = op(left, right)
        if type(result) is float or (type(result) is int and result.bit_length() <= MAX_BITS):
            return result
        _spend(result)
        return check_result(result)

    return apply
