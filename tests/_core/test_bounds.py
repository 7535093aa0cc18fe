"""The evaluators bound the cost of evaluating, not only the size of results: each crafted
input ends in a one-line ExpressionError quickly."""

from __future__ import annotations

import time

import numpy as np
import pytest

from perfport._core import Expr, ExpressionError
from perfport._core.values import evaluate_values

DEEP_MINUS = "-" * 1000 + "1"

EXPRESSIONS = [
    "(((2**256)**256)**256)**256 > wg",
    "'a' * 10**10",
    "(1 << (1 << 36))",
    DEEP_MINUS,
    "'%999999999d' % wg",
    "(wg,) * 10**9",
    "2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 * 2**200 > wg",
    "max(2**4000, 1) * 2**4000",
    "abs(" * 150 + "wg" + ")" * 150,
    "wg ** 300",  # an integer power's exponent past 256
    "wg ** (wg * 5)",  # one known only when evaluated
    "1.5 ** (wg * 50) > 0",  # a float power past float's range (1.5 ** 320 is a float)
]

VALUE_LISTS = [
    "[(((10**256)**256)**256) > 0]",
    "[i for i in range(1000000) for j in range(1000000) if False]",
    "['a' * 10**10]",
    "[" + DEEP_MINUS + "]",
    "[min(range(1000000)) for i in range(1000000)]",
    "[list(range(1000000)) for i in range(100)]",
    "[0 for i in range(1000000) for j in []]",
    "[1 << 100000]",
    "[" * 150 + "]" * 150,
]


def _fails_fast(call) -> str:
    start = time.perf_counter()
    with pytest.raises(ExpressionError) as info:
        call()
    assert time.perf_counter() - start < 2.0
    message = str(info.value)
    assert "\n" not in message and len(message) < 400
    return message


@pytest.mark.parametrize("text", EXPRESSIONS)
@pytest.mark.parametrize("mode", ["value", "vector"])
def test_expression_cost_is_bounded(text, mode):
    def run():
        expr = Expr(text, "restriction")
        if mode == "value":
            expr.value({"wg": 64})
        else:
            expr.vector({"wg": np.arange(1, 65)})

    _fails_fast(run)


@pytest.mark.parametrize("text", VALUE_LISTS)
def test_value_list_cost_is_bounded(text):
    _fails_fast(lambda: evaluate_values(text, "values"))


def test_object_arrays_go_through_the_same_bounds():
    # String parameters are object arrays in vector mode: elementwise 'a' * 10**10 is refused.
    expr = Expr("s * n > 'b'", "restriction")
    env = {"s": np.array(["a", "b"], dtype=object), "n": 10**10}
    assert "more than" in _fails_fast(lambda: expr.vector(env))
    assert list(expr.vector({"s": env["s"], "n": 2})) == [False, True]


def test_sizes_that_real_inputs_use_still_work():
    assert Expr("2**31 - 1 == x", "r").value({"x": 2**31 - 1}) is True
    assert Expr("1 << 62", "r").value({}) == 1 << 62
    assert Expr("'ab' * 3", "r").value({}) == "ababab"
    assert len(evaluate_values("list(range(1000000))")) == 1_000_000
    assert len(evaluate_values("[2**i for i in range(64)]")) == 64
    assert len(evaluate_values("[(a, b) for a in range(100) for b in range(100) if a < b]")) == 4950
