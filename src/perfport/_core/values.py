"""Safe evaluation of parameter-value lists written as Python: ``[1, 2, 4]``,
``list(range(32, 1025, 32))``, ``[2**i for i in range(10)]``, ``[1] + [2*i for i in range(1, 11)]``.

Kernel Tuner's T1 files and BAT's CAFF files store values this way. The AST is interpreted
node by node under a whitelist; nothing reaches ``eval``. Sizes are bounded before they are
computed (``perfport._core.bounds``), and so is the work: every node evaluated, every item a
loop visits (kept or filtered out) and every item an operation touches spends from one budget.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from typing import Any

from perfport._core.bounds import MAX_ITEMS, CostError, bounded, check_result, size_of
from perfport._core.errors import ExpressionError
from perfport._core.expr import BINARY_OPERATORS, COMPARISONS, parse

_MAX_ITEMS = MAX_ITEMS
# The work one list may cost: nodes evaluated and loop items visited (interpreted, about
# 2 us each on a busy core), and items that operations touch in C (tens of ns each): under a
# second in all, far beyond what the files of real tools need (at most a few hundred values).
MAX_STEPS = 200_000
MAX_TOUCHED = 5_000_000
_MAX_TEXT = 1 << 20  # characters of one expression
# Arithmetic only (no bit operations), and the comparisons, as in expressions.
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    op: bounded(op, f)
    for op, f in BINARY_OPERATORS.items()
    if op in (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
}
_COMPARE = COMPARISONS


def _checked_range(*args: int) -> range:
    r = range(*args)
    if len(r) > _MAX_ITEMS:
        raise ValueError(f"range of {len(r)} values is too long")
    return r


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "range": _checked_range,
    "list": list,
    "tuple": tuple,
    "sorted": sorted,
    "min": min,
    "max": max,
    "abs": abs,
    "int": int,
    "float": float,
    "round": round,
    "len": len,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "sqrt": math.sqrt,
}


def evaluate_values(text: str, what: str = "values") -> tuple[Any, ...]:
    """The list of values a Python list expression describes, as a tuple."""
    text = str(text).strip()
    shown = _short(text)
    if len(text) > _MAX_TEXT:
        raise ExpressionError(f"{what}: {shown} is longer than {_MAX_TEXT} characters")
    tree = parse(text, what)
    try:
        result = _Interpreter(what, shown).eval(tree.body, {})
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError, MemoryError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ExpressionError(f"{what}: {shown} fails: {reason}") from None
    if isinstance(result, range):
        result = list(result)
    if not isinstance(result, list | tuple):
        raise ExpressionError(f"{what}: {shown} is not a list of values")
    if len(result) > _MAX_ITEMS:
        raise ExpressionError(f"{what}: {shown} has more than {_MAX_ITEMS} values")
    return tuple(result)


def _short(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 120 else shown[:117] + "..."


class _Interpreter:
    def __init__(self, what: str, shown: str) -> None:
        self.what, self.shown = what, shown
        self.steps = 0
        self.touched = 0

    def fail(self, message: str) -> ExpressionError:
        return ExpressionError(f"{self.what}: {self.shown}: {message}")

    def spend(self, *values: Any) -> None:
        """Count one step and every item it touches; stop past either budget."""
        self.steps += 1
        self.touched += sum(size_of(v) for v in values)
        if self.steps > MAX_STEPS or self.touched > MAX_TOUCHED:
            raise self.fail(
                f"takes more than {MAX_STEPS} steps or {MAX_TOUCHED} items to evaluate; simplify it"
            )

    def eval(self, node: ast.AST, scope: Mapping[str, Any]) -> Any:
        self.spend()
        try:
            return self._eval(node, scope)
        except CostError as exc:
            raise self.fail(str(exc)) from None

    def _eval(self, node: ast.AST, scope: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool):
            return node.value
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.eval(e, scope) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            raise self.fail(f"unknown name {node.id!r}")
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.eval(node.left, scope), self.eval(node.right, scope)
            result = _BINARY[type(node.op)](left, right)
            self.spend(left, right, result)
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            value = self.eval(node.operand, scope)
            return (
                -value
                if isinstance(node.op, ast.USub)
                else (not value if isinstance(node.op, ast.Not) else value)
            )
        if isinstance(node, ast.BoolOp):
            values = [self.eval(v, scope) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            left = self.eval(node.left, scope)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = self.eval(comparator, scope)
                self.spend(left, right)  # comparing two lists walks both
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.eval(node.test, scope) else node.orelse, scope)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
        ):
            if node.keywords:
                raise self.fail("keyword arguments are not allowed")
            args = [self.eval(a, scope) for a in node.args]
            self.spend(*args)  # min(range(10**6)) walks its argument
            result = check_result(_FUNCTIONS[node.func.id](*args))
            if not isinstance(result, range):  # lazy: its items cost when a loop visits them
                self.spend(result)
            return result
        if isinstance(node, ast.ListComp):
            return self._comprehension(node, scope)
        raise self.fail(f"{type(node).__name__} is not allowed in a list of values")

    def _comprehension(self, node: ast.ListComp, scope: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = []

        def walk(level: int, inner: dict[str, Any]) -> None:
            if level == len(node.generators):
                out.append(self.eval(node.elt, inner))
                if len(out) > _MAX_ITEMS:
                    raise self.fail("list too long")
                return
            gen = node.generators[level]
            if not isinstance(gen.target, ast.Name) or gen.is_async:
                raise self.fail("comprehensions may bind one plain name per 'for'")
            for item in self.eval(gen.iter, inner):
                self.spend()  # a filtered-out item costs its visit too
                bound = {**inner, gen.target.id: item}
                if all(self.eval(cond, bound) for cond in gen.ifs):
                    walk(level + 1, bound)

        walk(0, dict(scope))
        return out
