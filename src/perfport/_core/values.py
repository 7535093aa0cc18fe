"""Safe evaluation of parameter-value lists written as Python: ``[1, 2, 4]``,
``list(range(32, 1025, 32))``, ``[2**i for i in range(10)]``, ``[1] + [2*i for i in range(1, 11)]``.

Kernel Tuner's T1 files and BAT's CAFF files store values this way. The AST is interpreted
node by node under a whitelist; nothing reaches ``eval``, and sizes are bounded.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from typing import Any

from perfport._core.errors import ExpressionError
from perfport._core.expr import BINARY_OPERATORS, COMPARISONS

_MAX_ITEMS = 1_000_000
# Arithmetic only (no bit operations), and the comparisons, as in expressions.
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    op: f
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
    try:
        tree = ast.parse(str(text).strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{what}: {text!r} is not valid syntax ({exc.msg})") from None
    try:
        result = _Interpreter(what, str(text)).eval(tree.body, {})
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError, OverflowError) as exc:
        raise ExpressionError(f"{what}: {text!r} fails: {exc}") from None
    if isinstance(result, range):
        result = list(result)
    if not isinstance(result, list | tuple):
        raise ExpressionError(f"{what}: {text!r} is not a list of values")
    if len(result) > _MAX_ITEMS:
        raise ExpressionError(f"{what}: {text!r} has more than {_MAX_ITEMS} values")
    return tuple(result)


class _Interpreter:
    def __init__(self, what: str, text: str) -> None:
        self.what, self.text = what, text

    def fail(self, message: str) -> ExpressionError:
        return ExpressionError(f"{self.what}: {self.text!r}: {message}")

    def eval(self, node: ast.AST, scope: Mapping[str, Any]) -> Any:
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
            if isinstance(node.op, ast.Pow) and isinstance(right, int | float) and abs(right) > 256:
                raise self.fail("exponent too large")
            if (
                isinstance(node.op, ast.Mult)
                and isinstance(left, list | tuple)
                and isinstance(right, int)
            ) and len(left) * right > _MAX_ITEMS:
                raise self.fail("list too long")
            return _BINARY[type(node.op)](left, right)
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
            return _FUNCTIONS[node.func.id](*(self.eval(a, scope) for a in node.args))
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
                bound = {**inner, gen.target.id: item}
                if all(self.eval(cond, bound) for cond in gen.ifs):
                    walk(level + 1, bound)

        walk(0, dict(scope))
        return out
