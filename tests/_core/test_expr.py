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


# ---- the vectorised evaluation against Python itself -------------------------------------
# Expressions over two ints (zero and negatives included) and a condition, as restrictions
# are written; Python's eval of the same text (this test's own input) is the reference.
A = np.array([-3, 0, 1, 2, 5, 64, 2**40])
B = np.array([0, 1, 3, 16])
C = np.array([False, True])
GRID = {"a": A[:, None, None], "b": B[None, :, None], "c": C[None, None, :]}

_LEAVES = ["a", "b", "c", "0", "1", "2", "3", "64", "2**62", "10**20", "True"]
_BINARY = ["+", "-", "*", "//", "%", "/", "**", "<<", "&", "|", "<", "<=", "==", "!=", "and", "or"]


def _expressions():
    from hypothesis import strategies as st

    leaf = st.sampled_from(_LEAVES)

    def grow(inner):
        return st.one_of(
            st.builds(lambda x, op, y: f"({x} {op} {y})", inner, st.sampled_from(_BINARY), inner),
            st.builds(lambda x: f"(-{x})", inner),
            st.builds(lambda x: f"(not {x})", inner),
            st.builds(lambda x, y, z: f"({x} if {y} else {z})", inner, inner, inner),
            st.builds(lambda x, y: f"min({x}, {y})", inner, inner),
        )

    return st.recursive(leaf, grow, max_leaves=6)


def _python(text, a, b, c):
    try:
        return ("value", eval(text, {"min": min}, {"a": a, "b": b, "c": c}))
    except (ArithmeticError, ValueError, TypeError):
        return ("error", None)
    except MemoryError:  # a power past any bound: perfport refuses it before computing
        return ("huge", None)


def _same(x, y) -> bool:
    if isinstance(x, float) or isinstance(y, float):
        x, y = float(x), float(y)
        return x == y or (np.isnan(x) and np.isnan(y)) or abs(x - y) <= 1e-9 * max(abs(x), abs(y))
    return x == y


def _check_against_python(text):
    """Each point as Python has it (the scalar evaluation too); the whole grid at once where
    it evaluates: it may instead hand a division by zero back to its caller, who then goes
    one point at a time, or refuse the expression where some point cannot be had at all."""
    from hypothesis import assume

    try:
        expr = Expr(text)
    except ExpressionError:  # a size the bounds refuse, as they do for Python's values too
        assume(False)
    try:
        grid = np.broadcast_to(expr.vector(GRID, strict=True), (len(A), len(B), len(C)))
    except FloatingPointError:
        grid = None
    except ExpressionError:
        grid = "refused"  # a str, never an array
    refused_somewhere = False
    for i, j, k in np.ndindex(len(A), len(B), len(C)):
        a, b, c = int(A[i]), int(B[j]), bool(C[k])
        try:
            one = ("value", expr.value({"a": a, "b": b, "c": c}))
        except ExpressionError as exc:
            one = ("error", None)
            if "that large" in str(exc) or "exponent larger" in str(exc):  # the bounds
                refused_somewhere = True
                continue
        refused_somewhere |= one[0] == "error"
        kind, want = _python(text, a, b, c)
        if kind == "huge" or (isinstance(want, int) and abs(want) > 2**4096):
            assert one[0] == "error", text  # past the bounds, which refuse it
            continue
        where = (text, a, b, c, one, want)
        assert one[0] == kind and (kind == "error" or _same(one[1], want)), where
        if kind == "value" and isinstance(grid, np.ndarray):
            assert _same(grid[i, j, k], want), (text, a, b, c, grid[i, j, k], want)
    assert not isinstance(grid, str) or refused_somewhere, text


def test_vector_and_scalar_evaluation_give_pythons_results():
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_expressions())
    def check(text):
        _check_against_python(text)

    check()


@pytest.mark.parametrize(
    "text",
    [
        "(a >= 2) + (b >= 3) <= 1",  # conditions add as 0 and 1
        "c + c == 2",
        "a * 2**60 < 2**62",  # 64 bits would wrap
        "2**a > 1000",
        "a ** 10 > 10**15",
        "(a or 64) >= 32",  # and/or give an operand, not True
        "(c and a) >= 16",
        "(c or b) == 1",
        "2 ** -b < 1",  # a negative integer power is a float
        "-(a > 16)",
        "10**20 // (a + 4) > 10**18",
        "b != 0 and a % b == 0",
    ],
)
def test_the_cases_numpy_got_wrong(text):
    _check_against_python(text)


def test_powers_grow_only_where_they_can():
    """Every power with an exponent past 256 was refused, 0 ** 512 and 1.5 ** 300 too, and
    the message named no fix."""
    for text, env in [("0 ** by == 0", {"by": 512}), ("1 ** by", {"by": 10**6}),
                      ("1.5 ** 300 > bx", {"bx": 4}), ("2.0 ** by > 1", {"by": 300}),
                      ("2 ** -by < 1", {"by": 300}), ("(-1) ** by", {"by": 301})]:  # fmt: skip
        vector = Expr(text).vector({k: np.array([v]) for k, v in env.items()}, strict=True)
        assert Expr(text).value(env) == eval(text, {}, env) == vector[0], text
    for mode in ("value", "vector"):
        with pytest.raises(
            ExpressionError, match=r"exponent is above 256 \(300\); .* 2\.0 \*\* 300"
        ):
            e = Expr("2 ** by > bx", "restriction")
            e.value({"by": 300, "bx": 1}) if mode == "value" else e.vector(
                {"by": np.array([300]), "bx": 1}
            )
        with pytest.raises(ExpressionError, match=r"out of range|overflow"):  # as Python's
            e = Expr("1.5 ** by > 0", "restriction")
            e.value({"by": 3000}) if mode == "value" else e.vector({"by": np.array([3000])})


# ---- a whole grid at once, as Python has each point ---------------------------------------
GRID_AB = {"a": np.array([1, 2, 4])[:, None], "b": np.array([1, 2, 4])[None, :]}


def _per_point(text, grid):
    """The expression at each point of a 2-d grid, by Python's eval of its text."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values()))
    out = np.empty(shape, dtype=object)
    for i, j in np.ndindex(*shape):
        env = {k: np.broadcast_to(v, shape)[i, j].item() for k, v in grid.items()}
        out[i, j] = eval(text, {}, env)
    return out


@pytest.mark.parametrize(
    "text", ["a in (b,)", "a not in (b,)", "a in (b, 2 * b)", "a in [b, 4]", "(a, b) in [(b, a)]"]
)
def test_membership_tests_each_point_against_its_own_items(text):
    """np.isin(a, np.array((b,))) tested each point against every b of the grid: 'a in (b,)'
    kept all 9 points, 'a not in (b,)' none."""
    got = np.broadcast_to(Expr(text).vector(GRID_AB, strict=True), (3, 3))
    assert got.tolist() == _per_point(text, GRID_AB).tolist()


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("u in ('auto', 4)", (0, 2, 4)),  # np.array(('auto', 4)) was all strings
        ("u in ('auto', 4)", (0, 2, 4, "auto")),
        ("(u if u > 1 else 'none') == 2", (1, 2, 4)),  # np.where made 2 the text '2'
        ("('tile' and u) or 5", (0.0, 1.5)),  # and 0.0 the text '0.0', which is true
        ("not ('tile' if u else '')", (0, 3)),
        ("('a' if u else 2) in (2, 'a')", (0, 1)),
    ],
)
def test_text_beside_numbers_keeps_each_values_type(text, values):
    grid = {"u": np.array(values, dtype=object if "auto" in values else None)}
    got = Expr(text).vector(grid, strict=True)
    want = [eval(text, {}, {"u": v}) for v in values]
    assert np.broadcast_to(got, (len(values),)).tolist() == want


def test_text_formatting_with_percent_is_refused_on_a_grid_too():
    """'1' % array is '1' (numpy's array is a mapping to str.__mod__): it kept everything."""
    for text in ("'1' % bx", "'%d' % bx == '2'"):
        with pytest.raises(FloatingPointError, match="formatting"):
            Expr(text).vector({"bx": np.array([1, 2, 4])}, strict=True)
        with pytest.raises(ExpressionError, match="formatting with % is not allowed"):
            Expr(text).value({"bx": 2})


@pytest.mark.parametrize(
    "text", ["floor(n * 2**60) >= bx", "ceil(n * 2**60 / 3) >= bx", "floor(bx * 1e30) > 0",
             "sqrt(n * 2**70) > bx", "log2(n * 2**70) > bx", "ceil(bx) == bx"],
)  # fmt: skip
def test_rounding_and_roots_past_64_bits_are_pythons(text):
    """floor(4096 * 2**60) was an AttributeError traceback ('int' has no 'astype'), and
    floor(bx * 1e30) wrapped to a negative int64."""
    bx = np.array([1, 2, 4])
    got = Expr(text).vector({"n": 4096, "bx": bx}, strict=True)
    want = [Expr(text).value({"n": 4096, "bx": int(b)}) for b in bx]
    assert np.broadcast_to(got, (3,)).tolist() == want == [True, True, True]


def test_a_guard_protects_on_the_whole_grid():
    """A division by zero behind a guard sent the grid point by point (49 s for 2.56e6
    points): the right of and/or and a branch of if now count only where reached."""
    grid = {"a": np.arange(6)[:, None], "b": np.arange(4)[None, :]}
    for text in (
        "b != 0 and a % b == 0",
        "b == 0 or a // b >= 2",
        "(a // b if b else a) >= 2",
        "(a if not b else a / b) > 1 and (b == 0 or 12 % b == 0)",
        "b < 3 or 2 ** (600 // b) > a",  # a power too large, and b = 0, where not reached
    ):
        got = np.broadcast_to(Expr(text).vector(grid, strict=True), (6, 4))
        assert got.tolist() == _per_point(text, grid).tolist(), text
    with pytest.raises(FloatingPointError):  # reached: the caller goes point by point
        Expr("b != 1 and a % b == 0").vector(grid, strict=True)
