import numpy as np
import pytest

from perfport._core import Expr, ExpressionError


def test_scalar_and_vector_agree():
    e = Expr("(a, b) in [(1, 64), (8, 8)] and a * b <= 4096 or ceil_div(a, 3) == 5")
    a = np.array([1, 8, 8, 13, 14])
    b = np.array([64, 8, 16, 1, 1])
    vector = e.vector({"a": a, "b": b})
    scalar = [e.value({"a": int(x), "b": int(y)}) for x, y in zip(a, b, strict=True)]
    assert list(vector) == scalar == [True, True, False, True, True]


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("round_up(n, wc)", {"n": 10, "wc": 4}, 12),
        ("ceil_div(n, 3)", {"n": 10}, 4),
        ("sizeof(dtype) * 2", {"dtype": "double"}, 16),
        ("ctype('float32')", {}, "float"),
        ("x if flag else y", {"x": 1, "y": 2, "flag": False}, 2),
        ("not a and b == 'nearest'", {"a": 0, "b": "nearest"}, True),
        ("min(a, b, 3) + max(a, 1)", {"a": 5, "b": 2}, 7),
        ("2 ** k", {"k": 10}, 1024),
        ("is_pow2(x)", {"x": 96}, False),
        ("x not in (1, 2)", {"x": 3}, True),
    ],
)
def test_values(text, env, expected):
    assert Expr(text).value(env) == expected


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "a.b",
        "open('x')",
        "[x for x in y]",
        "lambda: 1",
        "x[0]",
        "f(x)",
        "",
        "1 +",
        "a := 1",
    ],
)
def test_rejects_unsafe_or_broken(text):
    with pytest.raises(ExpressionError):
        Expr(text, "test")


def test_errors_are_one_line_and_name_the_expression():
    with pytest.raises(ExpressionError) as info:
        Expr("n / k", "global_size").value({"n": 1, "k": 0})
    assert "\n" not in str(info.value) and "'n / k'" in str(info.value)
    with pytest.raises(ExpressionError, match="unknown name 'q'"):
        Expr("q + 1").value({"n": 1})


def test_huge_exponent_refused():
    with pytest.raises(ExpressionError, match="exponent"):
        Expr("2 ** 100000").value({})


def test_pickles_by_text():
    import pickle

    e = pickle.loads(pickle.dumps(Expr("a + 1")))
    assert e.value({"a": 1}) == 2
