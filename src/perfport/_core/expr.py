"""Safe arithmetic expressions over named values: sizes, footprints, constraints.

Expressions are Python syntax, parsed with ``ast`` and checked against a whitelist of node
types and functions; nothing is ever passed to ``eval``. One parsed expression evaluates in two
modes: ``value`` with Python semantics on scalars (for one configuration), and ``vector`` on
numpy arrays, elementwise (for a whole search space at once).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from perfport._core.bounds import CostError, bounded, check_depth, check_result
from perfport._core.dtypes import DTYPE_NAMES, c_name, sizeof
from perfport._core.errors import ExpressionError

_MAX_LENGTH = 10_000
_MAX_NODES = 2_000
_MAX_EXPONENT = 256

BINARY_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _ceil_div(a: Any, b: Any) -> Any:
    return -(-a // b)


def _round_up(a: Any, b: Any) -> Any:
    return _ceil_div(a, b) * b


def _is_pow2(x: Any) -> Any:
    return (x > 0) & ((x & (x - 1)) == 0)


# name -> (scalar implementation, vector implementation)
FUNCTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "min": (min, lambda *a: np.minimum.reduce(np.broadcast_arrays(*a))),
    "max": (max, lambda *a: np.maximum.reduce(np.broadcast_arrays(*a))),
    "abs": (abs, np.abs),
    "ceil": (math.ceil, lambda x: np.ceil(x).astype(np.int64)),
    "floor": (math.floor, lambda x: np.floor(x).astype(np.int64)),
    "sqrt": (math.sqrt, np.sqrt),
    "log2": (math.log2, np.log2),
    "ceil_div": (_ceil_div, _ceil_div),
    "round_up": (_round_up, _round_up),
    "is_pow2": (lambda x: x > 0 and x & (x - 1) == 0, _is_pow2),
    "sizeof": (sizeof, sizeof),
    "ctype": (c_name, c_name),  # C name of an element type: ctype('float32') == 'float'
}

Env = Mapping[str, Any]
_Node = Callable[[Env], Any]


class Expr:
    """A parsed, whitelisted expression. ``what`` names where it came from, for errors."""

    def __init__(self, text: str, what: str = "expression") -> None:
        if not isinstance(text, str | int | float) or isinstance(text, bool):
            raise ExpressionError(f"{what}: expected an expression string, got {_short(text)}")
        self.text = str(text).strip()
        self.what = what
        if not self.text or len(self.text) > _MAX_LENGTH:
            raise ExpressionError(f"{what}: expression is empty or longer than {_MAX_LENGTH}")
        tree = parse(self.text, what)
        nodes = list(ast.walk(tree))
        if len(nodes) > _MAX_NODES:
            raise ExpressionError(f"{what}: {_short(self.text)} is too large")
        self.names = frozenset(
            n.id for n in nodes if isinstance(n, ast.Name) and n.id not in FUNCTIONS
        )
        self._scalar = _Compiler(self, vector=False).compile(tree.body)
        self._vector = _Compiler(self, vector=True).compile(tree.body)

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # The compiled closures cannot be pickled; the text re-parses to the same thing.
        return (Expr, (self.text, self.what))

    def value(self, env: Env) -> Any:
        """Evaluate on scalars with Python semantics."""
        try:
            result = self._scalar(env)
        except ExpressionError:
            raise
        except _FAILURES as exc:
            raise ExpressionError(
                f"{self.what}: {_short(self.text)} fails for {_describe(env, self.names)}: "
                f"{_reason(exc)}"
            ) from None
        return result.item() if isinstance(result, np.generic) else result

    def vector(self, env: Env, strict: bool = False) -> Any:
        """Evaluate elementwise on numpy arrays (scalars broadcast). ``strict``: a division
        by zero or an invalid value (where ``value`` would raise) raises FloatingPointError
        instead of giving numpy's 0, inf or nan, so the caller can apply Python's rules."""
        errors = (
            np.errstate(divide="raise", invalid="raise", over="ignore", under="ignore")
            if strict
            else np.errstate(all="ignore")
        )
        try:
            with errors:
                return self._vector(env)
        except (ExpressionError, FloatingPointError):
            raise
        except _FAILURES as exc:
            raise ExpressionError(
                f"{self.what}: {_short(self.text)} fails: {_reason(exc)}"
            ) from None


# What evaluating a well-formed expression on the wrong values raises (MemoryError: numpy
# refusing an array larger than memory).
_FAILURES = (ArithmeticError, TypeError, ValueError, MemoryError, KeyError, IndexError)


def parse(text: str, what: str) -> ast.Expression:
    """The syntax tree of one expression, or a one-line ExpressionError: not Python, or
    nested too deep to evaluate (the parser itself may give up with RecursionError)."""
    try:
        tree = ast.parse(text, mode="eval")
        check_depth(tree)
    except SyntaxError as exc:
        raise ExpressionError(f"{what}: {_short(text)} is not valid syntax ({exc.msg})") from None
    except (CostError, RecursionError, MemoryError, ValueError) as exc:
        reason = str(exc) if isinstance(exc, CostError) else "nested too deeply; simplify it"
        raise ExpressionError(f"{what}: {_short(text)} is {reason}") from None
    return tree


def _short(text: Any) -> str:
    """The expression (or value) quoted in an error, cut short: messages stay one line."""
    shown = repr(text)
    return shown if len(shown) <= 120 else shown[:117] + "..."


def _reason(exc: BaseException) -> str:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return reason if len(reason) <= 200 else reason[:197] + "..."


def _describe(env: Env, names: frozenset[str]) -> str:
    shown = ", ".join(f"{n}={_short(env[n])}" for n in sorted(names) if n in env)
    return shown or "these values"


class _Compiler:
    """Turns a whitelisted AST into nested closures for one evaluation mode."""

    def __init__(self, expr: Expr, vector: bool) -> None:
        self.expr = expr
        self.vector = vector

    def fail(self, message: str) -> ExpressionError:
        return ExpressionError(f"{self.expr.what}: {_short(self.expr.text)}: {message}")

    def compile(self, node: ast.AST) -> _Node:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"{type(node).__name__} is not allowed in expressions")
        return method(node)

    def _Constant(self, node: ast.Constant) -> _Node:
        value = node.value
        if not isinstance(value, int | float | str | bool):
            raise self.fail(f"constant {value!r} is not allowed")
        return lambda env: value

    def _Name(self, node: ast.Name) -> _Node:
        name, expr = node.id, self.expr
        if name in FUNCTIONS:
            raise self.fail(f"{name} is a function; call it")
        fallback = name if name in DTYPE_NAMES else None

        def load(env: Env) -> Any:
            if name in env:
                return env[name]
            if fallback is not None:
                return fallback
            known = ", ".join(sorted(env)) or "none"
            raise ExpressionError(
                f"{expr.what}: unknown name {name!r} in {_short(expr.text)}; known: {known}"
            )

        return load

    def _Tuple(self, node: ast.Tuple | ast.List) -> _Node:
        items = [self.compile(e) for e in node.elts]
        return lambda env: tuple(item(env) for item in items)

    _List = _Tuple

    def _BinOp(self, node: ast.BinOp) -> _Node:
        op = BINARY_OPERATORS.get(type(node.op))
        if op is None:
            raise self.fail(f"operator {type(node.op).__name__} is not allowed")
        left, right = self.compile(node.left), self.compile(node.right)
        apply = _vector_operation(op, type(node.op)) if self.vector else bounded(type(node.op), op)
        fail = self.fail
        exponent = node.right.value if isinstance(node.right, ast.Constant) else None
        constant = isinstance(exponent, int | float)
        # A constant exponent (n**2 in a count) is checked once, here; any other at each call.
        if isinstance(node.op, ast.Pow) and constant and _large_exponent(exponent):
            raise fail(f"exponent larger than {_MAX_EXPONENT}")
        checked_power = isinstance(node.op, ast.Pow) and not constant

        def binary(env: Env) -> Any:
            a, b = left(env), right(env)
            if checked_power and _large_exponent(b):
                raise fail(f"exponent larger than {_MAX_EXPONENT}")
            try:
                return apply(a, b)
            except CostError as exc:
                raise fail(str(exc)) from None

        return binary

    def _UnaryOp(self, node: ast.UnaryOp) -> _Node:
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda env: -operand(env)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Invert):
            return lambda env: ~operand(env)
        if self.vector:
            return lambda env: np.logical_not(operand(env))
        return lambda env: not operand(env)

    def _BoolOp(self, node: ast.BoolOp) -> _Node:
        values = [self.compile(v) for v in node.values]
        is_and = isinstance(node.op, ast.And)
        if self.vector:
            combine = np.logical_and if is_and else np.logical_or

            def vector_bool(env: Env) -> Any:
                result = values[0](env)
                for v in values[1:]:
                    result = combine(result, v(env))
                return result

            return vector_bool
        if is_and:
            return lambda env: all(v(env) for v in values)
        return lambda env: any(v(env) for v in values)

    def _IfExp(self, node: ast.IfExp) -> _Node:
        test, body, orelse = (self.compile(n) for n in (node.test, node.body, node.orelse))
        if self.vector:
            return lambda env: np.where(test(env), body(env), orelse(env))
        return lambda env: body(env) if test(env) else orelse(env)

    def _Compare(self, node: ast.Compare) -> _Node:
        operands = [self.compile(n) for n in [node.left, *node.comparators]]
        ops = [self._comparison(op) for op in node.ops]
        vector = self.vector

        def compare(env: Env) -> Any:
            left = operands[0](env)
            result: Any = True
            for op, operand in zip(ops, operands[1:], strict=True):
                right = operand(env)
                outcome = op(left, right)
                if vector:
                    result = np.logical_and(result, outcome)
                elif not outcome:
                    return False
                left = right
            return result

        return compare

    def _comparison(self, op: ast.cmpop) -> Callable[[Any, Any], Any]:
        if type(op) in COMPARISONS:
            return COMPARISONS[type(op)]
        if isinstance(op, ast.In | ast.NotIn):
            member = _member_vector if self.vector else _member_scalar
            if isinstance(op, ast.In):
                return member
            if self.vector:
                return lambda a, b: np.logical_not(member(a, b))
            return lambda a, b: not member(a, b)
        raise self.fail(f"comparison {type(op).__name__} is not allowed")

    def _Call(self, node: ast.Call) -> _Node:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise self.fail(f"only these functions may be called: {allowed}")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail("function calls take plain positional arguments only")
        func = FUNCTIONS[node.func.id][1 if self.vector else 0]
        args = [self.compile(a) for a in node.args]
        fail = self.fail

        def call(env: Env) -> Any:
            try:
                return check_result(func(*(a(env) for a in args)))
            except CostError as exc:
                raise fail(str(exc)) from None

        return call


def _large_exponent(b: Any) -> bool:
    if type(b) in (int, float):  # numpy costs microseconds on one Python number
        return abs(b) > _MAX_EXPONENT
    return bool(np.any(np.abs(b) > _MAX_EXPONENT))


def _vector_operation(op: Callable[[Any, Any], Any], op_type: type) -> Callable[[Any, Any], Any]:
    """``op`` elementwise. Numbers in numeric arrays have fixed widths, so they cost what
    their arrays cost; Python values (scalars, and object arrays of strings or large integers)
    go through the same bounds as in scalar mode, element by element."""
    scalar = bounded(op_type, op)
    elementwise = np.frompyfunc(scalar, 2, 1)

    def apply(a: Any, b: Any) -> Any:
        arrays = [x for x in (a, b) if isinstance(x, np.ndarray)]
        if not arrays:
            return scalar(a, b)
        if any(x.dtype == object for x in arrays):
            return elementwise(a, b)
        return op(a, b)

    return apply


def _member_scalar(item: Any, collection: Any) -> bool:
    if not isinstance(collection, tuple):
        raise TypeError("'in' needs a list or tuple on its right")
    return item in collection


def _member_vector(item: Any, collection: Any) -> Any:
    if not isinstance(collection, tuple):
        raise TypeError("'in' needs a list or tuple on its right")
    if isinstance(item, tuple):
        result: Any = False
        for candidate in collection:
            if not isinstance(candidate, tuple) or len(candidate) != len(item):
                continue
            match: Any = True
            for a, b in zip(item, candidate, strict=True):
                match = np.logical_and(match, np.equal(a, b))
            result = np.logical_or(result, match)
        return result
    if isinstance(item, np.ndarray):
        return np.isin(item, np.array(collection))
    return item in collection
