"""A model asked about counts it has no term for says so, one line per family: ``model
predict`` (stderr and --json's ``warnings``), ``model evaluate --kernel`` and model-guided
``tune`` (a float32 calibration on a float64 kernel ranked by its work-groups alone)."""

from __future__ import annotations

import json

import pytest
from model_support import LOOPY, calibration_file

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

BODY = """
import loopy as lp
import numpy as np


def _knl():
    return lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = 2 * x[i] * x[i] + y[i]",
                          [lp.GlobalArg("x,y", np.float64, shape=("n",)),
                           lp.ValueArg("n", np.int32)],
                          assumptions="n >= 1", lang_version=(2018, 2))
"""
KERNEL = BODY + 'kernel = lp.split_iname(_knl(), "i", 16, outer_tag="g.0", inner_tag="l.0")\n'
SPACE = (
    BODY
    + """
params = {"wg": [16, 32]}
sizes = {"n": 256}


def program(config):
    return lp.split_iname(_knl(), "i", config["wg"], outer_tag="g.0", inner_tag="l.0")
"""
)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _file(tmp_path, text, name="axpy64.py"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_predict_lists_the_float64_counts_a_float32_model_leaves_out(tmp_path, capsys):
    # It warned about memory on stderr only and said nothing of the float64 operations.
    cal = calibration_file(tmp_path / "cal.json", "dev")
    argv = ["model", "predict", cal, _file(tmp_path, KERNEL), "--problem", "n=256", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    ops, mem = json.loads(captured.out)["warnings"]
    assert "no term for the kernel's float64 madd, float64 mul operations" in ops
    assert "f_op_float64_madd" in ops
    assert "global float64 load, global float64 store accesses" in mem
    assert captured.err.count("WARNING: ") == 2 and ops in captured.err
    assert main(["model", "predict", cal, "matmul-noprefetch", "--problem", "n=128", "--json"]) == 0
    captured = capsys.readouterr()
    # The model (launches, float32 loads, groups) has no madd or store term; the integer
    # operations (index arithmetic) are never reported.
    warnings = json.loads(captured.out)["warnings"]
    assert [w.split(":")[0] for w in warnings] == [
        "the model has no term for the kernel's float32 madd operations",
        "the model has no term for the kernel's global float32 store accesses",
    ]


def test_a_model_s_own_features_cover_what_they_count():
    import loopy as lp
    import numpy as np

    from perfport.model import FeatureSet, gather
    from perfport.model.coverage import uncovered
    from perfport.model.model import Model

    knl = lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = 2 * x[i] * x[i] + y[i]",
                         [lp.GlobalArg("x,y", np.float64, shape=("n",)),
                          lp.ValueArg("n", np.int32)], lang_version=(2018, 2))  # fmt: skip
    stats = gather(lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0"))
    evaluated = stats.evaluate({"n": 256})
    model = Model("f_cl_wall_time", "p_a * f_bytes + p_b * f_ops",
                  definitions={"f_bytes": "8 * f_mem_access_global_float64",
                               "f_ops": "f_op_float64_madd + f_op_float64_mul"})  # fmt: skip
    assert uncovered(model.feature_set(), model.features, evaluated) == []
    features = FeatureSet()
    features.define_function("f_mine", lambda s: 1.0)  # what it counts is unknown: no warning
    assert uncovered(features, ["f_mine"], evaluated) == []


def test_evaluate_of_a_kernel_file_warns(tmp_path, capsys, cpu):
    pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")
    kernel, db = _file(tmp_path, KERNEL), str(tmp_path / "r.db")
    assert main(["model", "measure", kernel, "--sizes", "n=256", "--db", db, "--json"]) == 0
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    capsys.readouterr()
    argv = ["model", "evaluate", "--calibration", cal, "--kernel", kernel, "--db", db]
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    warnings = json.loads(captured.out)["warnings"]
    assert len(warnings) == 2 and "float64 madd" in warnings[0]
    assert captured.err.count("WARNING: ") == 2  # once each, not once per point


def test_model_guided_tune_warns_its_ranking_leaves_them_out(tmp_path, capsys, cpu):
    pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    argv = ["tune", _file(tmp_path, SPACE, "space64.py"), "--strategy", "model_guided",
            "--calibration", cal, "--db", str(tmp_path / "r.db"), "--budget", "1", "--confirm",
            "0", "--json"]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "model_guided: WARNING for space64, the model has no term for the kernel's " in err
    assert "float64 madd, float64 mul operations: the ranking leaves them out" in err
    assert "global float64 load, global float64 store accesses" in err


def test_barriers_no_term_counts_are_a_warning_too(tmp_path, capsys):
    # matmul-prefetch's local barriers were left out of the prediction with no word (its
    # memory accesses had one).
    cal = calibration_file(tmp_path / "cal.json", "dev")
    argv = ["model", "predict", cal, "matmul-prefetch", "--problem", "n=128", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    barrier = [w for w in json.loads(captured.out)["warnings"] if "barrier" in w]
    assert barrier == ["the model has no term for the kernel's local barriers: the prediction "
                       "leaves them out; add a term for them (e.g. f_sync_barrier_local) to the "
                       "model"]  # fmt: skip
    assert "WARNING: " + barrier[0] in captured.err
    assert main(["model", "predict", cal, "matmul-noprefetch", "--problem", "n=128"]) == 0
    assert "barrier" not in capsys.readouterr().err  # none to leave out
