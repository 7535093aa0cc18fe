"""Model formulas: safe to parse, evaluated on numpy arrays, differentiated symbolically.

A formula is parsed by perfport's whitelisted parser (``_core.expr.parse``: Python syntax,
depth-bounded, never ``eval``) after its feature names (which hold ``:{};<>``) are swapped for
placeholders; the tree is then rebuilt from the few nodes a differentiable model needs:
numbers, names, ``+ - * / **`` and the functions exp, log, sqrt and tanh.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core.errors import ExpressionError
from perfport._core.expr import parse
from perfport.model.errors import ModelError

# A feature name inside a model expression: f_ then name characters and {...} groups.
FEATURE_TOKEN = re.compile(r"(?<![A-Za-z0-9_])f_(?:[A-Za-z0-9_.:;<>=!]|\{[^{}]*\})+")
_MAX_NODES = 2_000
_MAX_EXPONENT = 256  # a constant power past it overflows (the formula is a float's)
_PLACEHOLDER = "_feature_{}_"


@dataclass(frozen=True)
class Node:
    """``op`` is num, sym, add, sub, mul, div, pow, neg, or a function name."""

    op: str
    args: tuple[Node, ...] = ()
    value: float = 0.0
    name: str = ""


def num(v: float) -> Node:
    return Node("num", value=float(v))


ZERO, ONE = num(0), num(1)

_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "tanh": np.tanh,
}
_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}


class DomainError(ModelError):
    """A formula divides by 0 or takes log, sqrt or a power outside its domain at the values
    given (a feature that is 0 for the kernel): no number, and not an overflow. ``row`` is the
    first row (of array values) where it does; 0 for scalars."""

    def __init__(self, message: str, row: int = 0) -> None:
        super().__init__(message)
        self.row = row


def evaluate(node: Node, env: Mapping[str, Any], strict: bool = False) -> Any:
    """``node`` at ``env`` (numbers or numpy arrays). Non-strict, a division by 0 or a domain
    error is inf or NaN (a fit's trial step may land there); ``strict`` raises DomainError
    naming the sub-expression and its value."""
    op, a = node.op, node.args
    if op == "num":
        return node.value
    if op == "sym":
        return env[node.name]
    if op == "neg":
        return -evaluate(a[0], env, strict)
    if op in _FUNCTIONS:
        x = evaluate(a[0], env, strict)
        if strict:
            _check_function(node, x)
        return _FUNCTIONS[op](x)
    x, y = evaluate(a[0], env, strict), evaluate(a[1], env, strict)
    if strict and op in ("div", "pow"):
        _check_binary(node, x, y)
    if op == "add":
        return x + y
    if op == "sub":
        return x - y
    if op == "mul":
        return x * y
    if op == "div":
        return np.true_divide(x, y)  # python floats' 1.0 / 0.0 raises: numpy's is inf
    return np.power(x, y)


def _first(bad: Any) -> int | None:
    """The first row where ``bad`` holds (0 for a scalar), or None."""
    rows = np.flatnonzero(np.atleast_1d(bad))
    return int(rows[0]) if rows.size else None


def _at(value: Any, row: int) -> float:
    flat = np.atleast_1d(value)
    return float(flat[row] if flat.size > 1 else flat[0])


def _check_function(node: Node, x: Any) -> None:
    finite = np.isfinite(x)
    if node.op == "log":
        row = _first(finite & (x <= 0))
        takes = "only positive values"
    elif node.op == "sqrt":
        row = _first(finite & (x < 0))
        takes = "no negative value"
    else:
        return
    if row is not None:
        inner = node.args[0]
        raise DomainError(
            f"{text(inner)} is {_at(x, row):g} {_where(inner)}: {text(node)} is a domain error "
            f"({node.op} takes {takes}); {_fix(inner, 'keeps its argument in range')}",
            row,
        )


def _check_binary(node: Node, x: Any, y: Any) -> None:
    finite = np.isfinite(x) & np.isfinite(y)
    if node.op == "div":
        row, base = _first(finite & (y == 0)), node.args[1]
        why = "divides by it"
    else:  # 0 ** -1 divides by 0; (-8) ** 0.5 has no real value
        row, base = _first(finite & (x == 0) & (y < 0)), node.args[0]
        why = "raises it to a negative power (a division by zero)"
        fractional = finite & (x < 0) & (np.floor(y) != y)
        if row is None and (bad := _first(fractional)) is not None:
            raise DomainError(
                f"{text(base)} is {_at(x, bad):g} {_where(base)}: {text(node)} raises a "
                "negative number to a fractional power (a domain error); "
                + _fix(base, "keeps its base at or above 0"),
                bad,
            )
    if row is not None:
        raise DomainError(
            f"{text(base)} is 0 {_where(base)}: {text(node)} {why}; "
            + _fix(base, f"cannot divide by 0 (e.g. 1 + {text(base, 2)} in its place)"),
            row,
        )


def _where(node: Node) -> str:
    """Whose value it is: the kernel's (a feature's) or the parameters'."""
    return "for this kernel" if _features_in(node) else "at these parameter values"


def _fix(node: Node, goal: str) -> str:
    if _features_in(node):
        return f"write the term so it {goal}, or leave the term out"
    return "give other initial values of the parameters"


def _features_in(node: Node) -> bool:
    return any(n.startswith("f_") for n in _symbols(node))


_SIGNS = {"add": " + ", "sub": " - ", "mul": " * ", "div": " / ", "pow": " ** "}
_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3, "pow": 4}


def text(node: Node, within: int = 0) -> str:
    """``node`` as formula text, parenthesised where an operator of precedence ``within``
    holds it."""
    if node.op == "num":
        out = f"{node.value:g}"
    elif node.op == "sym":
        out = node.name
    elif node.op in _FUNCTIONS:
        out = f"{node.op}({text(node.args[0])})"
    elif node.op == "neg":
        out = "-" + text(node.args[0], _PRECEDENCE["neg"] + 1)
    else:
        mine = _PRECEDENCE[node.op]
        right = mine + (node.op in ("sub", "div"))  # a - (b - c), a / (b * c)
        left = mine + (node.op == "pow")  # (a ** b) ** c
        out = text(node.args[0], left) + _SIGNS[node.op] + text(node.args[1], right)
    precedence = _PRECEDENCE.get(node.op, 5)
    return f"({out})" if precedence < within else out


def derivative(node: Node, name: str) -> Node:
    """d node / d name, simplified where a factor is 0 or 1."""
    op, a = node.op, node.args
    if op == "num":
        return ZERO
    if op == "sym":
        return ONE if node.name == name else ZERO
    if op == "neg":
        return _neg(derivative(a[0], name))
    if op in _FUNCTIONS:
        inner = derivative(a[0], name)
        outer = {
            "exp": node,
            "log": _div(ONE, a[0]),
            "sqrt": _div(num(0.5), node),
            "tanh": _sub(ONE, _mul(node, node)),
        }[op]
        return _mul(outer, inner)
    da, db = derivative(a[0], name), derivative(a[1], name)
    if op == "add":
        return _add(da, db)
    if op == "sub":
        return _sub(da, db)
    if op == "mul":
        return _add(_mul(da, a[1]), _mul(a[0], db))
    if op == "div":
        return _div(_sub(_mul(da, a[1]), _mul(a[0], db)), _mul(a[1], a[1]))
    # d(u**v) = v*u**(v-1)*du + u**v*log(u)*dv
    power = _mul(_mul(a[1], Node("pow", (a[0], _sub(a[1], ONE)))), da)
    if db == ZERO:
        return power
    return _add(power, _mul(_mul(node, Node("log", (a[0],))), db))


def _add(x: Node, y: Node) -> Node:
    if x == ZERO:
        return y
    return x if y == ZERO else Node("add", (x, y))


def _sub(x: Node, y: Node) -> Node:
    if y == ZERO:
        return x
    return _neg(y) if x == ZERO else Node("sub", (x, y))


def _mul(x: Node, y: Node) -> Node:
    if ZERO in (x, y):
        return ZERO
    if x == ONE:
        return y
    return x if y == ONE else Node("mul", (x, y))


def _div(x: Node, y: Node) -> Node:
    return ZERO if x == ZERO else Node("div", (x, y))


def _neg(x: Node) -> Node:
    return ZERO if x == ZERO else Node("neg", (x,))


@dataclass(frozen=True)
class Formula:
    """A parsed formula; ``names`` are its parameters (``p_``) and ``features`` (``f_``)."""

    text: str
    tree: Node
    parameters: tuple[str, ...]
    features: tuple[str, ...]

    @staticmethod
    def parse(text: str, what: str = "model") -> Formula:
        if not isinstance(text, str) or not text.strip():
            raise ModelError(
                f"{what}: the expression is empty; write e.g. p_madd * f_op_float32_madd"
            )
        features: list[str] = []

        def swap(match: Any) -> str:
            if match.group(0) not in features:
                features.append(match.group(0))
            return _PLACEHOLDER.format(features.index(match.group(0)))

        try:
            tree = parse(FEATURE_TOKEN.sub(swap, text), what)
        except ExpressionError as exc:
            message = str(exc)  # name the user's features, not the placeholders parsed
            for i, feature in enumerate(features):
                message = message.replace(_PLACEHOLDER.format(i), feature)
            raise ModelError(
                f"{message}; write + - * / ** over p_ parameters and f_ features"
            ) from None
        if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
            raise ModelError(f"{what}: the expression is too large (over {_MAX_NODES} nodes)")
        node = _Builder(what, features).build(tree.body)
        params = sorted(_symbols(node) - set(features))
        return Formula(text.strip(), node, tuple(params), tuple(features))

    def evaluate(self, env: Mapping[str, Any], strict: bool = True) -> Any:
        """The formula at ``env``; a division by 0 or a domain error there is a DomainError
        (inf or NaN where not ``strict``); an overflow is inf either way."""
        missing = [n for n in (*self.parameters, *self.features) if n not in env]
        if missing:
            raise ModelError(f"no value for {missing[0]} in {self.text[:80]!r}; give it")
        with np.errstate(all="ignore"):
            return evaluate(self.tree, env, strict)


def _symbols(node: Node) -> set[str]:
    if node.op == "sym":
        return {node.name}
    return set().union(*(_symbols(a) for a in node.args)) if node.args else set()


class _Builder:
    def __init__(self, what: str, features: list[str]) -> None:
        self.what, self.features = what, features

    def fail(self, message: str) -> ModelError:
        return ModelError(
            f"{self.what}: {message}; use numbers, p_ parameters, f_ features, + - * / ** "
            f"and {', '.join(_FUNCTIONS)}"
        )

    def build(self, node: ast.AST) -> Node:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise self.fail(f"constant {node.value!r} is not a number")
            return num(node.value)
        if isinstance(node, ast.Name):
            return Node("sym", name=self._name(node.id))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.build(node.left), self.build(node.right)
            if isinstance(node.op, ast.Pow) and not _symbols(right):
                with np.errstate(all="ignore"):  # a float: 9**9**9 is inf, not a huge int
                    exponent = float(evaluate(right, {}))
                if not abs(exponent) <= _MAX_EXPONENT:
                    raise ModelError(f"{self.what}: exponent larger than {_MAX_EXPONENT}; write "
                                     "a smaller power (a larger one overflows)")  # fmt: skip
            return Node(_BINARY[type(node.op)], (left, right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self.build(node.operand)
            return Node("neg", (inner,)) if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id not in _FUNCTIONS or node.keywords or len(node.args) != 1:
                raise self.fail(f"{node.func.id}(...) is not a one-argument model function")
            return Node(node.func.id, (self.build(node.args[0]),))
        raise self.fail(f"{type(node).__name__} is not allowed in a model expression")

    def _name(self, name: str) -> str:
        for i, feature in enumerate(self.features):
            if name == _PLACEHOLDER.format(i):
                return feature
        if not name.startswith("p_") or len(name) < 3:
            raise self.fail(f"unknown name {name!r}: parameters start with p_, features with f_")
        return name
