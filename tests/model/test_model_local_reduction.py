"""A loopy kernel whose reduction runs over a local iname (``l.0``) is measured with the
work-group its code requires: loopy makes that reduction work-group-wide only when it
preprocesses, and the NDRange was read from the kernel as written (a work-group of 1, so
every launch was refused: INVALID_WORK_GROUP_SIZE)."""

from __future__ import annotations

import json

import pytest
from model_support import LOOPY

from perfport._core.records import Problem
from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

KERNEL = """
import loopy as lp
import numpy as np

knl = lp.make_kernel("{[g, l]: 0 <= g < ng and 0 <= l < 64}", "p[g] = sum(l, x[g * 64 + l])",
                     [lp.GlobalArg("x", np.float32, shape=("ng * 64",)),
                      lp.GlobalArg("p", np.float32, shape=("ng",)), "..."],
                     lang_version=(2018, 2))
kernel = lp.tag_inames(knl, {"g": "g.0", "l": "l.0"})
"""


def test_the_spec_of_a_local_reduction_has_its_work_group():
    import loopy as lp
    import numpy as np

    from perfport.model.measure import kernel_spec

    knl = lp.make_kernel("{[g, l]: 0 <= g < ng and 0 <= l < 64}", "p[g] = sum(l, x[g*64 + l])",
                         [lp.GlobalArg("x", np.float32, shape=("ng * 64",)),
                          lp.GlobalArg("p", np.float32, shape=("ng",)), "..."],
                         lang_version=(2018, 2))  # fmt: skip
    knl = lp.tag_inames(knl, {"g": "g.0", "l": "l.0"})
    spec = kernel_spec(knl, "app-reduce", Problem.of({"ng": 4}))
    assert spec.local_size == ("64",)
    assert spec.global_size == ("(ng) * 64",)


def test_model_measure_runs_a_local_reduction(tmp_path, capsys):
    path = tmp_path / "reduce.py"
    path.write_text(KERNEL)
    argv = ["model", "measure", str(path), "--sizes", "ng=16", "--db", str(tmp_path / "r.db")]
    assert main([*argv, "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["status"] == "measured", result["message"]
