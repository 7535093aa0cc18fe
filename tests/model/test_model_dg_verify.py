"""``perfport tune loopy-dg`` verifies every configuration against numpy: the memory layout
of u and res is the problem value ``layout`` (node-fastest by default; element-fastest for the
``prefetch-dm-tr`` variant), which the reference follows and the space's rule matches to the
variants. A result in the other layout, or a perturbed one, is a wrong result."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from model_support import LOOPY

from perfport._core.signature import read_signature
from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

N = 64  # a multiple of every tile (8, 16, 32); small, so PoCL builds dominate
VARIANTS = {
    "node-fastest": {"plain", "prefetch-u", "prefetch-dm"},
    "element-fastest": {"prefetch-dm-tr"},
}


def _spec():
    from perfport.model.tunable import loopy_spec

    return loopy_spec("loopy-dg")


def test_the_layout_keeps_only_its_variants(cpu):
    from perfport.space import kernel_space

    spec = _spec()
    assert spec.reference is not None and dict(spec.problem)["layout"] == "node-fastest"
    # Every program's parameter list in the #if chain is read (test_signature reads two).
    assert read_signature(spec.source, spec.entry, spec.language) is not None
    for layout, variants in VARIANTS.items():
        space = kernel_space(spec, spec.problem.merged({"nelements": N, "layout": layout}), cpu)
        configs = [space.config(i) for i in range(len(space))]
        assert {c["variant"] for c in configs} == variants and len(configs) == 3 * len(variants)
    nowhere = spec.problem.merged({"nelements": N, "layout": "columns"})
    assert len(kernel_space(spec, nowhere, cpu)) == 0


@pytest.mark.parametrize(
    ("layout", "every"),
    [  # the fast suite verifies each variant at one tile; every tile of the twelve is slow
        # (test_model_apps verifies prefetch-dm-tr at tiles 8 and 32 against numpy too)
        ("element-fastest", False),
        ("node-fastest", False),
        pytest.param("element-fastest", True, marks=pytest.mark.slow),
        pytest.param("node-fastest", True, marks=pytest.mark.slow),
    ],
)
def test_dg_configurations_verify_on_pocl(layout, every, tmp_path, capsys, cpu):
    argv = ["tune", "loopy-dg", "--problem", f"nelements={N}", f"layout={layout}",
            "--db", str(tmp_path / "r.db"), "--json"]  # fmt: skip
    expected = 3 * len(VARIANTS[layout])
    if not every:
        configs = [{"variant": v, "tile": 16} for v in sorted(VARIANTS[layout])]
        (tmp_path / "configs.json").write_text(json.dumps(configs))
        argv += ["--configs", str(tmp_path / "configs.json")]
        expected = len(configs)
    assert main(argv) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["verification"] == "numpy reference"
    assert out["outcomes"]["ok"] == out["measured"] == expected
    assert "ignored" not in captured.err and "not verified" not in captured.err


def _reference_at(layout: str, perturb: bool = False):
    """DG's reference as if the problem's layout were ``layout`` (and, with ``perturb``, with
    one element off by one)."""
    from perfport.model.tunable import REFERENCES

    def reference(problem, inputs):
        out = REFERENCES["dg"]({**problem, "layout": layout}, inputs)
        res = out["res"].copy()
        res[len(res) // 3] += perturb
        return {"res": res}

    return reference


@pytest.mark.parametrize(
    "layout, variant, judged_at, perturb",
    [
        ("element-fastest", "prefetch-dm-tr", "node-fastest", False),
        ("node-fastest", "prefetch-dm", "element-fastest", False),
        ("node-fastest", "plain", "node-fastest", True),
    ],
)
def test_a_wrong_result_is_caught(layout, variant, judged_at, perturb, tmp_path, cpu):
    from perfport._core import Outcome
    from perfport.measure import RunSettings
    from perfport.tune import tune

    spec = dataclasses.replace(_spec(), reference=_reference_at(judged_at, perturb))
    config = {"variant": variant, "tile": 16}
    run = tune(spec, problem={"nelements": N, "layout": layout}, device=cpu,
               db=tmp_path / "r.db", configs=[config], settings=RunSettings())  # fmt: skip
    (m,) = [m for m in run.measurements if dict(m.config) == config]
    assert m.outcome is Outcome.WRONG_RESULT


def test_the_reference_refuses_a_layout_it_does_not_know():
    from perfport._core.errors import SpecError
    from perfport.model.tunable import REFERENCES

    inputs = {"diff_mat": np.zeros(3 * 64 * 64, np.float32), "u": np.zeros(N * 64, np.float32)}
    with pytest.raises(SpecError, match="layout 'columns': give one of node-fastest"):
        REFERENCES["dg"]({"nelements": N, "layout": "columns"}, inputs)
