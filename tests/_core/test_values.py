import pytest

from perfport._core import ExpressionError
from perfport._core.values import evaluate_values


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2, 4]", (1, 2, 4)),
        ("list(range(1, 4))", (1, 2, 3)),
        ("list(range(32, 1024+1, 32))", tuple(range(32, 1025, 32))),
        ("[1] + [2*i for i in range(1,4)]", (1, 2, 4, 6)),
        ("[2**i for i in range(4) if i != 2]", (1, 2, 8)),
        ("[(a, b) for a in range(2) for b in range(2) if a <= b]", ((0, 0), (0, 1), (1, 1))),
        ("range(3)", (0, 1, 2)),
        ("['a', 'b']", ("a", "b")),
        ("[1.5, 2.5]", (1.5, 2.5)),
    ],
)
def test_values(text, expected):
    assert evaluate_values(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "[x.real for x in range(3)]",
        "open('f').read()",
        "list(range(10**9))",
        "[0] * 10**8",
        "2 ** 10000",
        "lambda: 1",
        "[1, 2",
        "5",
        "[y for y in range(3) for z in y]",
    ],
)
def test_rejected(text):
    with pytest.raises(ExpressionError) as info:
        evaluate_values(text, "test")
    assert "\n" not in str(info.value)
