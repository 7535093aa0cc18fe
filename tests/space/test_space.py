import itertools
import time

import numpy as np
import pytest

from perfport._core import Param
from perfport.kernels import builtin
from perfport.space import Constraint, ConstraintSource, Space, kernel_space


def test_enumeration_matches_brute_force():
    params = [Param("a", (1, 2, 4, 8)), Param("b", (1, 3, 5)), Param("c", ("x", "y"))]
    constraints = [Constraint.of("a * b <= 12"), Constraint.of("c == 'x' or a > 2")]
    space = Space(params, constraints)
    expected = [
        {"a": a, "b": b, "c": c}
        for a, b, c in itertools.product((1, 2, 4, 8), (1, 3, 5), ("x", "y"))
        if a * b <= 12 and (c == "x" or a > 2)
    ]
    assert [dict(cfg) for cfg in space] == expected
    assert space.report.cartesian == 24 and space.report.legal == len(expected)
    assert sum(n for _, n, _ in space.report.removed_by) == 24 - len(expected)
    for i, cfg in enumerate(space):
        assert space.index(cfg) == i
    assert space.index({"a": 8, "b": 5, "c": "x"}) is None


def test_matmul_has_lawsons_640_configurations(cpu):
    space = kernel_space(builtin("matmul"), None, cpu)
    assert space.report.cartesian == 2304
    assert len(space) == 640


def test_device_limits_prune_stencil(cpu):
    spec = builtin("stencil")
    space = kernel_space(spec, None, cpu)
    cols = space.columns()
    assert np.all(cols["wc"] * cols["wr"] <= cpu.max_work_group_size)
    pruned = space.report.removed(ConstraintSource.DEVICE)
    assert pruned == space.report.cartesian - len(space) > 0


def test_local_memory_limit_is_checked_before_launch(cpu):
    # Borders of 300 cells make the halo tile exceed PoCL's local memory for large groups.
    spec = builtin("stencil")
    space = kernel_space(spec, spec.problem.merged({"north": 300, "south": 300}), cpu)
    labels = {label: n for label, n, _ in space.report.removed_by}
    local = [n for label, n in labels.items() if "local memory" in label]
    assert local and local[0] > 0


def test_a_conditional_local_memory_footprint_of_zero_is_within_the_limit(cpu):
    """A footprint chosen per configuration, 0 for some: the comparison with the device's
    limit covers the whole expression, not its last branch."""
    from perfport.space.kernel_space import device_constraints

    footprint = "(0) if (staged == 0) else ((4 * tile * tile) if (staged == 1) else (1))"
    [limit] = device_constraints(cpu, ("1",), (), (footprint,))
    space = Space([Param("staged", (0, 1)), Param("tile", (8, 1024))], [limit])
    kept = sorted((c["staged"], c["tile"]) for c in map(space.config, range(len(space))))
    assert kept == [(0, 8), (0, 1024), (1, 8)]  # 4 MiB of tile is over any device's limit


def test_large_space_is_fast():
    params = [Param(f"p{i}", tuple(range(1, 11))) for i in range(7)]  # 10^7 points
    start = time.perf_counter()
    space = Space(params, [Constraint.of("p0 * p1 <= 50"), Constraint.of("(p2 + p3) % 2 == 0")])
    elapsed = time.perf_counter() - start
    assert space.report.cartesian == 10**7 and 0 < len(space) < 10**7
    assert elapsed < 30  # generous: the benchmark measures the real speed


def test_derived_values_constrain_and_define():
    from perfport import ArrayArg, KernelSpec

    spec = KernelSpec(
        name="tiles",
        source="__kernel void k(__global float* a) {}",
        entry="k",
        params=(Param("tx", (1, 2, 4, 8)), Param("ty", (1, 2, 4, 8))),
        derived={"area": "tx * ty", "big": "area >= 16"},
        restrictions=("area <= 32",),
        defines={"AREA": "area"},
        global_size=("64",),
        local_size=("1",),
        args=(ArrayArg("a", "float", ("64",), output=True),),
    )
    space = kernel_space(spec)
    assert len(space) == sum(1 for x in (1, 2, 4, 8) for y in (1, 2, 4, 8) if x * y <= 32)
    env = spec.env({"tx": 4, "ty": 8}, {})
    assert env["area"] == 32 and env["big"] is True
    assert spec.build_defines(env)["AREA"] == "32"


def test_min_work_groups_soft_rule(cpu):
    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 1024})
    plain = kernel_space(spec, problem, cpu)
    soft = kernel_space(spec, problem, cpu, min_work_groups=True)
    cols = soft.columns()
    assert np.all(np.ceil(1024 / cols["wg"]) >= cpu.compute_units)
    assert len(soft) < len(plain)  # wg = 1024 gives one group
    assert any("soft rule" in label for label, _, _ in soft.report.removed_by)


def test_spaces_too_large_to_enumerate_are_refused_in_one_line():
    from perfport._core import SpecError

    nine = [Param(f"p{i}", tuple(range(1000))) for i in range(9)]
    with pytest.raises(SpecError, match=r"1e\+27 configurations.*fewer values"):
        Space(nine)


@pytest.mark.parametrize("block", [1, 5, 7, 64, 1 << 24])
def test_blocks_of_any_size_enumerate_the_same_space(monkeypatch, block):
    import perfport.space.space as space_module

    monkeypatch.setattr(space_module, "_BLOCK", block)
    params = [Param("a", (1, 2, 3)), Param("b", (1, 2, 4, 8)), Param("c", (0, 1, 2, 3, 4))]
    space = Space(params, [Constraint.of("a * b > c"), Constraint.of("(a + c) % 2 == 0")])
    expected = [
        {"a": a, "b": b, "c": c}
        for a, b, c in itertools.product((1, 2, 3), (1, 2, 4, 8), (0, 1, 2, 3, 4))
        if a * b > c and (a + c) % 2 == 0
    ]
    assert [dict(c) for c in space] == expected
    assert space.report.cartesian == 60 and space.report.legal == len(expected)
    assert sum(n for _, n, _ in space.report.removed_by) == 60 - len(expected)


def test_too_many_legal_configurations_are_refused(monkeypatch):
    import perfport.space.space as space_module
    from perfport._core import SpecError

    monkeypatch.setattr(space_module, "MAX_LEGAL", 100)
    with pytest.raises(SpecError, match="more than 100 legal"):
        Space([Param("a", tuple(range(20))), Param("b", tuple(range(20)))])


def test_a_configuration_number_outside_the_space_is_refused():
    from perfport._core import PerfportError

    space = Space([Param("a", (1, 2, 3))])
    assert dict(space.config(2)) == {"a": 3}
    for bad in (-1, 3):  # -1 was the last configuration, 3 an IndexError from numpy
        with pytest.raises(PerfportError, match="outside the space's 0-2"):
            space.config(bad)


def test_kernel_space_names_what_it_takes():
    """kernel_space("stencil") and a device id ended in AttributeErrors from inside."""
    from perfport._core import SpecError

    with pytest.raises(
        SpecError, match=r"takes a KernelSpec, not str 'stencil'; perfport\.builtin"
    ):
        kernel_space("stencil")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="takes a DeviceInfo, not str 'opencl:0:0'"):
        kernel_space(builtin("stencil"), None, "opencl:0:0")  # type: ignore[arg-type]


@pytest.mark.parametrize("block", [3, 1 << 24])
def test_division_by_zero_in_a_constraint_follows_python(monkeypatch, block):
    """numpy's 8 % 0 is 0 and 8 / 0 is inf, so an unguarded constraint kept configurations
    that fail at launch; a guarded one must still keep what Python keeps."""
    import perfport.space.space as space_module
    from perfport._core import Expr, SpecError

    monkeypatch.setattr(space_module, "_BLOCK", block)
    params = [Param("a", (4, 6, 8)), Param("b", (0, 1, 2, 3))]
    cases = {
        "b != 0 and a % b == 0": lambda a, b: b != 0 and a % b == 0,
        "b == 0 or a % b == 0": lambda a, b: b == 0 or a % b == 0,
        "(a // b if b else a) >= 3": lambda a, b: (a // b if b else a) >= 3,
    }
    for text, rule in cases.items():
        space = Space(params, [Constraint.of("a > 4"), Constraint.of(text)])
        expected = [
            {"a": a, "b": b}
            for a, b in itertools.product((4, 6, 8), (0, 1, 2, 3))
            if a > 4 and rule(a, b)
        ]
        assert [dict(c) for c in space] == expected, text
        assert sum(n for _, n, _ in space.report.removed_by) == 12 - len(expected)
    for text in ("a % b == 0", "a / b > 2"):
        with pytest.raises(SpecError, match=r"fails for a=6, b=0: .*by zero; guard it"):
            Space(params, [Constraint.of("a > 4"), Constraint.of(text)])
    # A derived value that divides by zero is read one configuration at a time, after the
    # constraints before it have removed what it cannot be computed for.
    derived = [("per", Expr("a // b"))]
    space = Space(params, [Constraint.of("b > 1"), Constraint.of("per >= 3")], derived=derived)
    assert [dict(c) for c in space] == [{"a": 6, "b": 2}, {"a": 8, "b": 2}]
    with pytest.raises(SpecError, match=r"'a // b' fails for a=4, b=0"):
        Space(params, [Constraint.of("per >= 3")], derived=derived)


def test_a_size_below_one_is_named_even_when_it_empties_the_space(cpu):
    """n = -5 was reported as a global size not divisible by any work-group, with advice
    about ceil_div, while n = -64 got 'sizes must be at least 1'."""
    from perfport._core import ArrayArg, KernelSpec, ParamKind, SpecError

    spec = KernelSpec(
        name="k", source="__kernel void k(__global float* a) {}", entry="k",
        params=(Param("wg", (16, 32), ParamKind.LAUNCH),), global_size=("n",), local_size=("wg",),
        args=(ArrayArg("a", "float", ("64",), output=True),), problem={"n": 64},
        default={"wg": 16},
    )  # fmt: skip
    with pytest.raises(SpecError, match="must all be at least 1; give other problem values"):
        kernel_space(spec, spec.problem.merged({"n": -5}), cpu)


def test_a_local_size_parameter_below_one_is_refused(cpu):
    """A work-group of 0 failed as a modulo by zero in a device rule the user never wrote."""
    from perfport._core import ArrayArg, KernelSpec, ParamKind, SpecError

    spec = KernelSpec(
        name="k", source="__kernel void k(__global float* a) {}", entry="k",
        params=(Param("wg", (0, 16), ParamKind.LAUNCH),), global_size=("n",), local_size=("wg",),
        args=(ArrayArg("a", "float", ("n",), output=True),), problem={"n": 64},
    )  # fmt: skip
    with pytest.raises(
        SpecError, match="wg is a local size, so each of its values must be at least 1"
    ):
        kernel_space(spec, None, cpu)


def test_kernel_space_checks_the_problem_as_tune_does(cpu):
    """A size given as '4096' gave no legal configuration, blamed on 'n % bx == 0', where
    tune refused it; None a raw TypeError. Both are tune's one-line errors now."""
    from perfport._core import SpecError

    spec = _one_dim("n", "bx", (16, 32), {"n": 4096})
    cases = [
        ({"n": "4096"}, "problem value n must be an integer .default 4096., got '4096'"),
        ({"n": 4096.5}, "problem value n must be an integer"),
        ({"n": None}, "problem n: value None must be a number"),
        ({"m": 4096}, "kernel k has no problem value m; its problem values: n"),
    ]
    for problem, message in cases:
        for device in (None, cpu):
            with pytest.raises(SpecError, match=message):
                kernel_space(spec, problem, device)
    assert len(kernel_space(spec, {"n": 4096}, cpu)) == 2


def _one_dim(global_size, local_size, values, problem, **extra):
    from perfport._core import ArrayArg, KernelSpec, ParamKind

    return KernelSpec(
        name="k", source="__kernel void k(__global float* a) {}", entry="k",
        params=(Param("bx", values, ParamKind.LAUNCH),), global_size=(global_size,),
        local_size=(local_size,), args=(ArrayArg("a", "float", ("n + 64",), output=True),),
        problem=problem, **extra,
    )  # fmt: skip


def test_only_a_whole_round_up_to_the_local_size_is_exempt_from_divisibility(cpu):
    """A sum that starts with round_up( and ends with , bx) was taken for a padded size, so
    round_up(4, 8) + round_up(64, bx) = 72 counted every bx legal where only bx=8 divides."""
    from perfport.space.kernel_space import divisible_sizes

    summed = "round_up(h, 8) + round_up(n, bx)"
    assert divisible_sizes((summed,), ("bx",)) == [(summed, "bx")]
    spec = _one_dim(summed, "bx", (8, 16, 32, 64), {"n": 64, "h": 4})
    space = kernel_space(spec, None, cpu)
    assert [c["bx"] for c in space] == [8]
    # Padded sizes as the built-ins write them stay exempt, however spaced.
    padded = ("round_up(n, wg)", "round_up( ceil_div(n, ITEMS),wg )", "round_up(n, bx // 2)")
    assert divisible_sizes(padded, ("wg", "wg", "bx//2")) == []
    assert divisible_sizes(("round_up(n, wg) * 2", "round_up(n, 8)"), ("wg", "wg")) == [
        ("round_up(n, wg) * 2", "wg"),
        ("round_up(n, 8)", "wg"),
    ]
    # A spelling the text match never exempted keeps its (true) rule: rules are in campaign
    # keys, and a resumed campaign must find its key.
    assert divisible_sizes(("round_up(n, (wg))",), ("wg",)) == [("round_up(n, (wg))", "wg")]


def test_a_local_size_expression_below_one_is_refused_naming_it(cpu):
    """local_size 'bx // 2' is 0 at bx=1: that failed as a modulo by zero in the device's
    divisibility rule, a constraint the user never wrote."""
    from perfport._core import SpecError

    spec = _one_dim("n", "bx // 2", (1, 2, 4, 8), {"n": 64})
    message = "local size 'bx // 2' is 0 for bx=1, and a local size must be at least 1"
    for device in (cpu, None):  # as a parameter's values are, with a device or without
        with pytest.raises(SpecError, match=message):
            kernel_space(spec, None, device)
    # The restriction the message suggests is enough.
    guarded = _one_dim("n", "bx // 2", (1, 2, 4, 8), {"n": 64}, restrictions=("bx // 2 >= 1",))
    assert [c["bx"] for c in kernel_space(guarded, None, cpu)] == [2, 4, 8]
    # Read through a derived value, or a problem value, it is found all the same.
    derived = _one_dim("n", "hw", (1, 2, 4, 8), {"n": 64}, derived={"hw": "bx - 1"})
    with pytest.raises(SpecError, match="local size 'hw' is 0 for hw=0, "):
        kernel_space(derived, None, cpu)
    constant = _one_dim("n", "m", (1, 2), {"n": 64, "m": 0})
    with pytest.raises(SpecError, match="local size 'm' is 0 for m=0, "):
        kernel_space(constant, None, cpu)


def test_values_beyond_int64_are_kept_exact():
    """A uint64 bitmask (18446744073709551615) in an imported Kernel Tuner cache: the space
    built its values as int64 and every replay ended in an OverflowError traceback."""
    top = (1 << 64) - 1
    mask = Param("mask", (255, top))
    space = Space([mask, Param("v", (1, 2))], [Constraint.of("mask % 2 == 1 and v < 2")])
    assert [dict(c) for c in space] == [{"mask": 255, "v": 1}, {"mask": top, "v": 1}]
    assert space.columns()["mask"].tolist() == [255, top]
    stored = Space.from_configs([mask], [{"mask": top}])
    assert len(stored) == 1 and stored.index({"mask": top}) == 0
    # Beside floats, an integer past float64's range stays exact as well.
    huge = Param("x", (0.5, 10**400))
    assert [c["x"] for c in Space([huge], [Constraint.of("x > 1")])] == [10**400]


def test_constraints_may_be_given_as_text_or_functions_and_anything_else_is_named():
    """Space(params, ["a > 1"]) was an AttributeError ('str' object has no attribute 'expr')."""
    from perfport._core import SpecError

    params = [Param("a", (1, 2, 3)), Param("b", (9, 10))]
    assert [dict(c) for c in Space(params, ["a > 2"])] == [{"a": 3, "b": 9}, {"a": 3, "b": 10}]
    assert len(Space(params, [lambda c: c["b"] == 9, Constraint.of("a < 3")])) == 2
    with pytest.raises(SpecError, match=r"^constraints must be a list, e\.g\. \['a > 1'\]"):
        Space(params, "a > 1")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"^constraint 3 must be a Constraint, an expression"):
        Space(params, [3])  # type: ignore[list-item]
    with pytest.raises(SpecError, match=r"^params must be Param records, got \('a', \(1, 2\)\)"):
        Space([("a", (1, 2))])  # type: ignore[list-item]


def test_a_configuration_outside_a_space_from_configurations_is_named():
    """from_configs said 'a value outside the parameters' values: (False, 9)' for a value not
    among them, and called a missing parameter a value outside too."""
    from perfport._core import SpecError

    params = [Param("a", (1, 2)), Param("b", (9, 10))]
    assert len(Space.from_configs(params, [{"a": 1, "b": 9}, {"a": 2, "b": 10}])) == 2
    with pytest.raises(
        SpecError, match=r"^configuration 2: b=11 is not one of the parameter's values \[9, 10\]$"
    ):
        Space.from_configs(params, [{"a": 1, "b": 9}, {"a": 2, "b": 11}])
    with pytest.raises(
        ValueError, match=r"^configuration 1 \{'a': 1\} has no value for parameter b; give"
    ):
        Space.from_configs(params, [{"a": 1}])


def test_membership_in_a_list_of_parameter_expressions_follows_python():
    """'a in (b,)' kept all 9 configurations (each a tested against every b of the grid),
    'a not in (b,)' none; with text in the list numbers were compared as strings."""
    ab = [Param("a", (1, 2, 4)), Param("b", (1, 2, 4))]
    counts = {"a in (b,)": 3, "a not in (b,)": 6, "a in (b, 2*b)": 5, "a in [b, 4]": 5}
    for text, n in counts.items():
        assert len(Space(ab, [text])) == n, text
    kept = {
        ((0, 2, 4), "u in ('auto', 4)"): [4],
        ((0, 2, 4, "auto"), "u in ('auto', 4)"): [4, "auto"],
        ((1, 2, 4), "(u if u > 1 else 'none') == 2"): [2],
        ((0.0, 1.5), "'tile' and u"): [1.5],
    }
    for (values, text), legal in kept.items():
        assert [c["u"] for c in Space([Param("u", values)], [text])] == legal, text


def test_a_restriction_whose_value_is_a_tuple_or_list_is_true_as_in_python():
    """'(bx, by)' ended in a raw ValueError traceback, '[]' in a broadcasting error."""
    params = [Param("bx", (1, 2, 4)), Param("by", (1, 2))]
    assert len(Space(params, ["(bx, by)"])) == 6  # a tuple with items is true
    assert len(Space(params, ["(bx, by) and bx > 1"])) == 4
    assert len(Space(params, ["[]"])) == len(Space(params, ["()"])) == 0


def test_a_guarded_division_is_evaluated_on_the_whole_grid():
    """One zero divisor behind a guard sent its block point by point: 49.5 s for 40^4."""
    params = [Param(f"p{i}", tuple(range(40))) for i in range(4)]
    start = time.perf_counter()
    space = Space(params, ["p1 != 0 and p0 % p1 == 0", "(p2 // p3 if p3 else p2) <= 20"])
    assert time.perf_counter() - start < 5  # well under a second alone
    p0, p1 = np.meshgrid(range(40), range(40), indexing="ij")
    pairs = int(np.count_nonzero((p1 != 0) & (p0 % np.maximum(p1, 1) == 0)))
    p2, p3 = np.meshgrid(range(40), range(40), indexing="ij")
    rest = int(np.count_nonzero(np.where(p3 != 0, p2 // np.maximum(p3, 1), p2) <= 20))
    assert len(space) == pairs * rest


def test_strings_built_over_a_whole_space_are_bounded():
    """A 300-byte T1 file ('a' * x + y == 'b', x near a million) ran 53 s: each string is
    under the bound, the grid of them is not."""
    params = [Param("x", tuple(range(999000, 999100))), Param("y", tuple(f"s{i}" for i in range(100)))]  # fmt: skip
    from perfport._core import SpecError

    start = time.perf_counter()
    with pytest.raises(SpecError, match="over the whole space have more than 10000000 items"):
        Space(params, ["'a' * x + y == 'b'"])
    assert time.perf_counter() - start < 2
    # A string per configuration, as restrictions write them, is still taken.
    assert len(Space(params, ["y + '!' != 's1!'", "'a' * (x % 3) != 'aa'"])) == 99 * 67


def test_a_constraint_that_fails_only_where_earlier_ones_removed_is_not_taken_one_by_one():
    """'p1 != 0' then 'p0 % p1 == 0' (the guard as its own restriction) went through the
    2.5e6 configurations left one at a time, as did a power past the bounds at the last
    values of a parameter: the minutes before its one-line error."""
    from perfport._core import SpecError

    params = [Param(f"p{i}", tuple(range(40))) for i in range(4)]
    start = time.perf_counter()
    space = Space(params, ["p1 != 0", "p0 % p1 == 0", "p3 > 0", "p0 < p1 < p2 // p3"])
    a, b, c, d = np.ix_(*[np.arange(40)] * 4)
    with np.errstate(divide="ignore"):  # where b or d is 0, the rules before it hold not
        kept = (
            (b != 0) & (a % np.maximum(b, 1) == 0) & (d > 0) & (a < b) & (b < c // np.maximum(d, 1))
        )
    assert len(space) == np.count_nonzero(kept)
    big = [Param("p0", tuple(range(300))), Param("p1", tuple(range(40))), *params[2:]]
    with pytest.raises(SpecError, match=r"'2 \*\* p0 > p1': an integer power's exponent is above"):
        Space(big, ["2 ** p0 > p1"])
    message = r"'p1 // \(p0 - 299\) < 9' fails for p0=299, p1=0: integer division or modulo"
    with pytest.raises(SpecError, match=message):  # the first that fails, as one by one
        Space(big, ["p1 // (p0 - 299) < 9"])
    assert time.perf_counter() - start < 10  # a few seconds on a busy core
