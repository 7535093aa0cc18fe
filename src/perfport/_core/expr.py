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
from perfport._core.elementwise import (
    CEIL,
    FLOOR,
    LOG2,
    SQRT,
    as_number,
    fit,
    huge,
    integral,
    is_bool,
    is_text,
    member,
    objects,
    pick,
    truth,
    where_reached,
)
from perfport._core.errors import ExpressionError

_MAX_LENGTH = 10_000
_MAX_NODES = 2_000

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
    "min": (min, lambda *a: np.minimum.reduce(np.broadcast_arrays(*fit(a)))),
    "max": (max, lambda *a: np.maximum.reduce(np.broadcast_arrays(*fit(a)))),
    "abs": (abs, np.abs),
    "ceil": (math.ceil, CEIL),
    "floor": (math.floor, FLOOR),
    "sqrt": (math.sqrt, SQRT),
    "log2": (math.log2, LOG2),
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
        """Evaluate elementwise on numpy arrays (scalars broadcast), with Python's results
        where they can be had for the whole grid at once. ``strict``: where some point fails
        (a division by zero, a value past the bounds, a negative shift), or numpy would give
        its 0, inf or nan where Python raises, raise FloatingPointError, and the caller goes
        point by point with ``value`` for Python's own error (or result: a failure in a
        branch Python would not take, as the right of a chained comparison, counts too;
        those of ``and``, ``or`` and ``if`` count only where reached)."""
        errors = (
            np.errstate(divide="raise", invalid="raise", over="ignore", under="ignore")
            if strict
            else np.errstate(all="ignore")
        )
        try:
            with errors:
                return self._vector(env)
        except _Unbounded as exc:
            if strict:
                raise FloatingPointError(str(exc)) from None
            raise
        except ExpressionError:
            raise
        except (FloatingPointError, *_FAILURES) as exc:
            if strict and not isinstance(exc, MemoryError):  # a grid too large: no retry
                raise FloatingPointError(str(exc)) from None
            raise ExpressionError(
                f"{self.what}: {_short(self.text)} fails: {_reason(exc)}"
            ) from None


class _Unbounded(ExpressionError):
    """A bound exceeded somewhere on a grid evaluated whole."""


# What evaluating a well-formed expression on the wrong values raises (MemoryError: numpy
# refusing an array larger than memory).
_FAILURES = (ArithmeticError, TypeError, ValueError, MemoryError, KeyError, IndexError)
# What a branch may raise at points Python never takes it to, tried again where it does.
_RETRIED = (_Unbounded, ArithmeticError, TypeError, ValueError, KeyError, IndexError)


def _names(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def parse(text: str, what: str, flat: tuple[type[ast.operator], ...] = ()) -> ast.Expression:
    """The syntax tree of one expression, or a one-line ExpressionError: not Python, or
    nested too deep to evaluate (the parser itself may give up with RecursionError). A chain
    of ``flat`` operators counts as one level (``check_depth``)."""
    try:
        tree = ast.parse(text, mode="eval")
        check_depth(tree, flat)
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

    def beyond(self, message: str) -> ExpressionError:
        """A value past the bounds. On a whole grid it may lie in a branch Python would not
        have taken (``x if c else 2**y``), so a strict caller retries point by point."""
        error = _Unbounded if self.vector else ExpressionError
        return error(f"{self.expr.what}: {_short(self.expr.text)}: {message}")

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
        beyond = self.beyond

        def binary(env: Env) -> Any:
            try:
                return apply(left(env), right(env))
            except CostError as exc:
                raise beyond(str(exc)) from None

        return binary

    def _UnaryOp(self, node: ast.UnaryOp) -> _Node:
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda env: -as_number(operand(env))
        if isinstance(node.op, ast.UAdd):
            return lambda env: +as_number(operand(env))
        if isinstance(node.op, ast.Invert):
            fail = self.fail

            def invert(env: Env) -> Any:
                value = operand(env)
                if is_bool(value):  # Python's ~True is -2, numpy's False: neither is meant
                    raise fail("~ of a condition is ambiguous; negate it with 'not'")
                return ~value

            return invert
        if self.vector:
            return lambda env: np.logical_not(truth(operand(env)))
        return lambda env: not operand(env)

    def _BoolOp(self, node: ast.BoolOp) -> _Node:
        """Python's ``and``/``or``: the operand that decides, not True or False, so
        ``(bx or 64) >= 32`` means what it means in Python; and each operand counts only
        where Python evaluates it (``b != 0 and a % b == 0``)."""
        values = [self.compile(v) for v in node.values]
        is_and = isinstance(node.op, ast.And)
        if self.vector:
            later = [(v, _names(n)) for v, n in zip(values[1:], node.values[1:], strict=True)]

            def vector_bool(env: Env) -> Any:
                result = values[0](env)
                for v, names in later:
                    holds = truth(result)
                    reached = holds if is_and else np.logical_not(holds)
                    if not np.any(reached):  # Python stops here at every point
                        break
                    if np.all(reached):
                        result = v(env)
                    else:
                        other = where_reached(v, env, reached, names, _RETRIED)
                        result = pick(reached, other, result)
                return result

            return vector_bool

        def scalar_bool(env: Env) -> Any:
            result: Any = None
            for v in values:
                result = v(env)
                if bool(result) is not is_and:  # and: the first falsy; or: the first truthy
                    return result
            return result

        return scalar_bool

    def _IfExp(self, node: ast.IfExp) -> _Node:
        test, body, orelse = (self.compile(n) for n in (node.test, node.body, node.orelse))
        if not self.vector:
            return lambda env: body(env) if test(env) else orelse(env)
        body_names, orelse_names = _names(node.body), _names(node.orelse)

        def vector_if(env: Env) -> Any:
            holds = truth(test(env))
            if np.all(holds):  # one branch everywhere, the other evaluated nowhere
                return body(env)
            if not np.any(holds):
                return orelse(env)
            yes = where_reached(body, env, holds, body_names, _RETRIED)
            no = where_reached(orelse, env, np.logical_not(holds), orelse_names, _RETRIED)
            return pick(holds, yes, no)

        return vector_if

    def _Compare(self, node: ast.Compare) -> _Node:
        operands = [self.compile(n) for n in [node.left, *node.comparators]]
        ops = [self._comparison(op) for op in node.ops]
        vector = self.vector

        def compare(env: Env) -> Any:
            left = operands[0](env)
            result: Any = True
            for op, operand in zip(ops, operands[1:], strict=True):
                right = operand(env)
                if vector:
                    result = np.logical_and(result, op(*fit((left, right))))
                elif not op(left, right):
                    return False
                left = right
            return result

        return compare

    def _comparison(self, op: ast.cmpop) -> Callable[[Any, Any], Any]:
        if type(op) in COMPARISONS:
            return COMPARISONS[type(op)]
        if isinstance(op, ast.In | ast.NotIn):
            contains = member if self.vector else _member_scalar
            if isinstance(op, ast.In):
                return contains
            if self.vector:
                return lambda a, b: np.logical_not(contains(a, b))
            return lambda a, b: not contains(a, b)
        raise self.fail(f"comparison {type(op).__name__} is not allowed")

    def _Call(self, node: ast.Call) -> _Node:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise self.fail(f"only these functions may be called: {allowed}")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail("function calls take plain positional arguments only")
        func = FUNCTIONS[node.func.id][1 if self.vector else 0]
        args = [self.compile(a) for a in node.args]
        beyond = self.beyond

        def call(env: Env) -> Any:
            try:
                return check_result(func(*(a(env) for a in args)))
            except CostError as exc:
                raise beyond(str(exc)) from None

        return call


# Arithmetic, where Python's True is 1 (numpy's bool + bool is "or", -bool an error).
_ARITHMETIC = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
                         ast.LShift, ast.RShift})  # fmt: skip
# Integer operations whose result can outgrow numpy's 64 bits, where Python's ints grow.
_GROWING = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.LShift})
_INT64_SAFE = 2.0**62  # below this a float's estimate of an int64 result cannot have wrapped


def _vector_operation(op: Callable[[Any, Any], Any], op_type: type) -> Callable[[Any, Any], Any]:
    """``op`` elementwise with Python's results. Numbers in numeric arrays have fixed widths,
    so they cost what their arrays cost; Python values (scalars, object arrays of strings or
    large integers) go through the same bounds as in scalar mode, element by element, and so
    do integers that 64 bits would wrap and negative integer powers (Python's are floats)."""
    scalar = bounded(op_type, op)
    elementwise = np.frompyfunc(scalar, 2, 1)
    arithmetic = op_type in _ARITHMETIC

    def by_element(a: Any, b: Any) -> Any:
        return elementwise(objects(a), objects(b))

    def apply(a: Any, b: Any) -> Any:
        arrays = [x for x in (a, b) if isinstance(x, np.ndarray)]
        if not arrays:  # numpy's scalars (a reduction's result) as Python's numbers
            return scalar(objects(a), objects(b))
        # Text too: numpy would repeat it unbounded, or format with ('1' % array is '1').
        python = any(x.dtype == object for x in arrays) or is_text(a) or is_text(b)
        if python or huge(a) or huge(b):
            return by_element(a, b)
        if arithmetic:
            a, b = as_number(a), as_number(b)
        if integral(a) and integral(b) and _outgrows_int64(op_type, op, a, b):
            return by_element(a, b)
        if op_type is ast.Pow:  # Python's float power raises where it overflows (1.5 ** 2000)
            with np.errstate(over="raise"):
                return op(a, b)
        return op(a, b)

    return apply


def _outgrows_int64(op_type: type, op: Callable[[Any, Any], Any], a: Any, b: Any) -> bool:
    """Whether an integer operation's exact result needs Python's ints: too large for 64
    bits, or a negative power (a float in Python; numpy refuses it)."""
    if op_type in (ast.Pow, ast.LShift, ast.RShift) and np.any(np.asarray(b) < 0):
        return True  # Python: a float, or a ValueError; numpy: an error, or any number
    if op_type not in _GROWING:
        return False
    fa, fb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        estimate = fa * 2.0**fb if op_type is ast.LShift else op(fa, fb)
    return not bool(np.all(np.abs(estimate) < _INT64_SAFE))  # inf and nan fail too


def _member_scalar(item: Any, collection: Any) -> bool:
    if not isinstance(collection, tuple):
        raise TypeError("'in' needs a list or tuple on its right")
    return item in collection
