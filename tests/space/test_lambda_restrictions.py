"""Restrictions given as Python functions (a Python spec's lambdas, as Kernel Tuner takes)."""

import itertools
import pickle
import textwrap

import pytest

from perfport._core import ArrayArg, KernelSpec, Param, ParamKind, SpecError
from perfport.kernels.loader import load_kernel as load_spec
from perfport.space import Constraint, Space, kernel_space

SOURCE = "__kernel void k(__global float* x) { x[get_global_id(0)] = 1.0f; }"


def _spec(*restrictions):
    return KernelSpec(
        name="k", source=SOURCE, entry="k",
        params=(Param("bx", (16, 32, 64, 128), ParamKind.LAUNCH), Param("tile", (1, 2, 4))),
        global_size=("n",), local_size=("bx",), problem={"n": 4096},
        restrictions=restrictions, args=(ArrayArg("x", "float", ("n",), output=True),),
    )  # fmt: skip


def test_a_lambda_gives_the_same_space_as_the_expression():
    by_lambda = kernel_space(_spec(lambda c: c["bx"] * c["tile"] <= 128))
    by_text = kernel_space(_spec("bx * tile <= 128"))
    assert list(by_lambda) == list(by_text) and by_lambda.report.legal == 9
    (label, removed, _), = by_lambda.report.removed_by  # fmt: skip
    assert removed == 3 and "lambda" in label


def test_functions_mix_with_expressions_and_see_only_live_configurations():
    seen = []

    def wide(c):
        seen.append(dict(c))
        return c["tile"] != 2

    params = [Param("a", (1, 2, 4)), Param("tile", (1, 2, 4))]
    space = Space(params, [Constraint.of("a < 4"), Constraint.of(wide)])
    expected = [{"a": a, "tile": t} for a, t in itertools.product((1, 2, 4), (1, 2, 4))
                if a < 4 and t != 2]  # fmt: skip
    assert [dict(c) for c in space] == expected
    assert len(seen) == 6  # the expression removed 3 of 9 before the function ran


def test_a_failing_function_is_a_one_line_error():
    with pytest.raises(SpecError, match=r"raised KeyError: .*'nope'.* fix the function"):
        kernel_space(_spec(lambda c: c["nope"] > 1))


def test_the_spec_describes_the_lambda_stably_and_pickles_without_it():
    spec = _spec("tile <= 2", lambda c: c["bx"] >= 32)
    text = spec.describe()["restrictions"]
    # The lambda alone, not the line it sits on (the _spec call).
    assert text == ["tile <= 2", 'python: lambda c: c["bx"] >= 32']
    two = _spec(lambda c: c["bx"] >= 32, lambda d: d["tile"] < 4)  # two on a line: each its own
    assert two.describe()["restrictions"] == ['python: lambda c: c["bx"] >= 32',
                                              'python: lambda d: d["tile"] < 4']  # fmt: skip
    again = pickle.loads(pickle.dumps(spec))  # the worker's copy: expressions only
    assert again.restrictions == ("tile <= 2",)


def test_python_spec_file_takes_lambdas_and_toml_refuses_them(tmp_path):
    py = tmp_path / "spec.py"
    py.write_text(
        textwrap.dedent(f"""
        from perfport import ArrayArg, KernelSpec, Param, ParamKind
        kernel = KernelSpec(
            name="k", source={SOURCE!r}, entry="k",
            params=(Param("bx", (16, 32, 64), ParamKind.LAUNCH),),
            global_size=("n",), local_size=("bx",), problem={{"n": 4096}},
            restrictions=[lambda p: p["bx"] != 32],
            args=(ArrayArg("x", "float", ("n",), output=True),),
        )
    """)
    )
    assert [c["bx"] for c in kernel_space(load_spec(py))] == [16, 64]
    toml = tmp_path / "spec.toml"
    toml.write_text(
        textwrap.dedent(f"""
        name = "k"
        source = {SOURCE!r}
        entry = "k"
        global_size = ["n"]
        local_size = ["bx"]
        restrictions = ["lambda p: p['bx'] != 32"]
        problem = {{ n = 4096 }}
        [[params]]
        name = "bx"
        values = [16, 32]
        kind = "launch"
    """).replace("'''", "")
    )
    with pytest.raises(SpecError, match=r"Python lambda.*move the spec to a \.py file"):
        load_spec(toml)


def test_two_restrictions_shown_alike_keep_their_own_counts():
    """Two lambdas on one source line had one label: the report's JSON kept one count."""
    from perfport._core import Param
    from perfport.space import Constraint, Space

    # fmt: off
    space = Space([Param("bx", (8, 16, 32)), Param("tile", (1, 2, 4))], [Constraint.of(lambda p: p["bx"] != 32), Constraint.of(lambda p: p["tile"] != 4)])
    # fmt: on
    counts = space.report.to_json()["removed_by"]
    assert sorted(counts.values()) == [2, 3] and len(space) == 4
    assert [label[-4:] for label in counts][1] == " (2)"
