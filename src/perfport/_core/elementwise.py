"""What ``expr``'s vector mode needs beyond numpy's operators to give Python's results.

numpy fixes one type per array, where Python's values mix: beside a string, numpy turns the
numbers of ``0 if x else 'auto'`` into text ('0.0', which is true), and ``np.array((b, 'a'))``
into strings. Values that mix, and integers past 64 bits, are therefore combined as arrays of
Python objects; truth is Python's (a tuple is true when it has items); membership tests each
point against each item of the list; and the right of ``and``/``or`` and the branches of
``if`` count their failures only where Python reaches them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Env = Mapping[str, Any]


def is_bool(x: Any) -> bool:
    return isinstance(x, bool | np.bool_) or (isinstance(x, np.ndarray) and x.dtype == bool)


def as_number(x: Any) -> Any:
    """Python's arithmetic on a condition: True is 1."""
    if isinstance(x, np.ndarray) and x.dtype == bool:
        return x.astype(np.int64)
    return int(x) if isinstance(x, bool | np.bool_) else x


def integral(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "iu"
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


def huge(x: Any) -> bool:
    """A Python int numpy cannot hold in 64 bits (numpy would refuse it, not compute)."""
    return type(x) is int and not -(2**63) <= x < 2**63


def is_text(x: Any) -> bool:
    """A string, or an array of them (which numpy's operators would treat as its own)."""
    return isinstance(x, str) or (isinstance(x, np.ndarray) and x.dtype.kind in "US")


def _numeric(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "biuf"
    return isinstance(x, int | float | np.number | np.bool_)


def objects(x: Any) -> Any:
    """Python values: an array of Python ints, floats and strings, or a Python scalar."""
    if isinstance(x, np.ndarray):
        return x.astype(object)
    return x.item() if isinstance(x, np.generic) else x


def fit(values: Sequence[Any]) -> Sequence[Any]:
    """Values numpy can combine with Python's results: as Python objects when one is an int
    too large for 64 bits, or when text meets numbers (numpy would make the numbers text)."""
    mixed = any(map(is_text, values)) and any(map(_numeric, values))
    if not mixed and not any(huge(v) for v in values):
        return values
    return [np.asarray(objects(v), dtype=object) for v in values]


def truth(x: Any) -> Any:
    """Python's truth of each value: a tuple or list is true when it has items (whatever they
    are), a string when it is not empty, a number when it is not zero."""
    if isinstance(x, tuple | list):
        return bool(x)
    if not isinstance(x, np.ndarray):
        return bool(x)
    if x.dtype == bool:
        return x
    if x.dtype.kind in "US":
        return np.char.str_len(x) > 0
    if x.dtype == object:
        return np.asarray(np.frompyfunc(bool, 1, 1)(x)).astype(bool)
    return x.astype(bool)


def pick(where: Any, yes: Any, no: Any) -> Any:
    """``yes`` where ``where`` holds, else ``no``, each point keeping its own type."""
    if isinstance(yes, tuple | list) or isinstance(no, tuple | list):
        raise TypeError("a tuple or list chosen per configuration")  # point by point, then
    return np.where(where, *fit((yes, no)))


def equal(a: Any, b: Any) -> Any:
    """Python's ``a == b`` at each point; tuples compare item by item, as Python's do."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
            return False
        same: Any = True
        for x, y in zip(a, b, strict=True):
            same = np.logical_and(same, equal(x, y))
        return same
    return operator.eq(*fit((a, b)))


def member(item: Any, collection: Any) -> Any:
    """Python's ``item in collection`` at each point: equal to one of its items there (the
    items may be values of the configuration too, ``bx in (by, 2 * by)``)."""
    if not isinstance(collection, tuple):
        raise TypeError("'in' needs a list or tuple on its right")
    found: Any = False
    for candidate in collection:
        found = np.logical_or(found, equal(item, candidate))
    return found


def rounding(exact: Callable[[Any], Any], fast: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``floor`` or ``ceil`` of each value as Python's exact int: in 64 bits where the
    values fit, else as Python ints (math.floor(1e30) and floor(2**70) are exact)."""

    def apply(x: Any) -> Any:
        if isinstance(x, np.ndarray) and x.dtype.kind in "biu":
            return x.astype(np.int64) if x.dtype == bool else x
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            rounded = fast(x)
            if np.all(np.abs(rounded) < 2.0**63):  # NaN and infinity fail: Python raises
                return rounded.astype(np.int64)
        if isinstance(x, np.ndarray):
            return np.frompyfunc(exact, 1, 1)(objects(x))
        return exact(objects(x))

    return apply


def real(exact: Callable[[Any], float], fast: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``sqrt`` or ``log2`` of each value; Python's for ints past 64 bits (numpy has none)."""

    def apply(x: Any) -> Any:
        if (isinstance(x, np.ndarray) and x.dtype == object) or huge(x):
            out = np.frompyfunc(exact, 1, 1)(objects(x))
            return out.astype(np.float64) if isinstance(out, np.ndarray) else out
        return fast(x)

    return apply


def where_reached(
    evaluate: Callable[[Env], Any],
    env: Env,
    reached: np.ndarray,
    names: frozenset[str],
    retried: tuple[type[BaseException], ...],
) -> Any:
    """``evaluate(env)`` at the points ``reached``, as Python evaluates the right of ``and``
    and ``or`` and a branch of ``if`` only where it gets there: a failure elsewhere
    (``b != 0 and a % b == 0`` at b = 0) must not count. The whole grid is tried first; if
    that fails, the reached points only, gathered from the names ``evaluate`` reads. Other
    points of the result hold zeros, for the caller to leave unpicked."""
    try:
        return evaluate(env)
    except retried:
        grids = {n: env[n] for n in names if isinstance(env.get(n), np.ndarray) and env[n].ndim}
        if not grids:
            raise  # the same value at every point, reached at some
    shape = np.broadcast_shapes(reached.shape, *(a.shape for a in grids.values()))
    at = np.broadcast_to(reached, shape)
    value = evaluate({**env, **{n: np.broadcast_to(a, shape)[at] for n, a in grids.items()}})
    if isinstance(value, tuple | list):
        raise TypeError("a tuple or list chosen per configuration")
    value = np.asarray(value)
    out = np.zeros(shape, dtype=value.dtype)
    out[at] = value
    return out


FLOOR = rounding(math.floor, np.floor)
CEIL = rounding(math.ceil, np.ceil)
SQRT = real(math.sqrt, np.sqrt)
LOG2 = real(math.log2, np.log2)
