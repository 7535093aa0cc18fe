"""``perfport tune loopy-fd --strategy model_guided --calibration FILE``: the first
configuration measured is the one the calibration predicts fastest; what cannot run is one
line, exit 2, with the store untouched."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_support import LOOPY, calibration_file

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)
pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

N = 560  # a multiple of every FD interior (lsize - 2)


def test_model_guided_measures_the_predicted_fastest_first(tmp_path, capsys, cpu, monkeypatch):
    from perfport.cli.model_fit import _cache_folder
    from perfport.model import StatsCache
    from perfport.model.calibrate import Calibration
    from perfport.model.tunable import guided_ranker, loopy_space, loopy_spec
    from perfport.space import kernel_space
    from perfport.strategies.model_guided import ModelGuided

    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    asked: list[int | None] = []
    ask = ModelGuided.ask
    monkeypatch.setattr(ModelGuided, "ask", lambda self: asked.append(ask(self)) or asked[-1])
    argv = ["tune", "loopy-fd", "--strategy", "model_guided", "--calibration", cal, "--problem",
            f"n={N}", "--db", str(tmp_path / "r.db"), "--budget", "2", "--confirm", "0", "--json"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == "model_guided" and out["measured"] == 2
    assert out["verification"] == "numpy reference"
    spec = loopy_spec("loopy-fd")
    space = kernel_space(spec, {"n": N}, cpu)
    fd = loopy_space("loopy-fd")
    # The statistics tune counted, from its cache folder: the same, not counted again.
    cache = StatsCache(_cache_folder())
    ranker = guided_ranker(fd, Calibration.load(cal), [], {"n": N}, space, cache)
    predicted = ranker.predict()
    assert not np.isnan(predicted).any()
    assert asked[0] == int(np.argmin(predicted))


def _refused(argv, capsys, db) -> str:
    before = db.read_bytes()
    assert main([*argv, "--db", str(db), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert db.read_bytes() == before  # the store is untouched
    assert err.startswith("perfport: error: ") and "\n" not in err and "Traceback" not in err
    return err


@pytest.fixture
def store_file(tmp_path):
    from perfport.store import Store

    db = tmp_path / "kept.db"
    with Store(db):
        pass
    return db


def test_model_guided_without_a_calibration_is_refused(capsys, store_file):
    err = _refused(["tune", "loopy-fd", "--strategy", "model_guided"], capsys, store_file)
    assert "--calibration FILE" in err and "perfport model calibrate" in err


def test_a_kernel_loopy_cannot_count_is_refused(tmp_path, capsys, store_file, cpu):
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    argv = ["tune", "vector_add", "--strategy", "model_guided", "--calibration", cal]
    err = _refused(argv, capsys, store_file)
    assert "not a loopy kernel" in err and "loopy-fd" in err and "calibrate" in err


def test_a_calibration_of_another_device_is_refused(tmp_path, capsys, store_file, cpu):
    cal = calibration_file(tmp_path / "cal.json", "Some Other GPU")
    argv = ["tune", "loopy-fd", "--strategy", "model_guided", "--calibration", cal]
    err = _refused(argv, capsys, store_file)
    assert "'Some Other GPU'" in err and repr(cpu.name) in err


def test_a_calibration_without_model_guided_is_refused(tmp_path, capsys, store_file, cpu):
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    argv = ["tune", "loopy-fd", "--strategy", "random", "--calibration", cal]
    assert "--calibration is for --strategy model_guided" in _refused(argv, capsys, store_file)


def test_strategies_say_model_guided_needs_a_calibration(capsys):
    assert main(["strategies", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["strategies"]}
    assert "--calibration" in rows["model_guided"]["requires"]
    assert rows["random"]["requires"] is None


def test_a_loopy_kernel_on_several_devices_is_refused(capsys, store_file, cpu):
    argv = ["tune", "loopy-fd", "--device", cpu.id, "--device", cpu.id]
    assert "loopy-fd tunes on one device" in _refused(argv, capsys, store_file)


def test_other_commands_name_where_loopy_kernels_run(capsys):
    assert main(["space", "loopy-fd"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "only 'perfport tune loopy-fd' on one device" in err


def test_replay_of_model_guided_names_the_commands_that_run_it(capsys, store_file):
    argv = ["replay", "--strategy", "model_guided", "--budget", "2", "--repeats", "1"]
    err = _refused(argv, capsys, store_file)
    assert "perfport tune loopy-fd --strategy model_guided" in err and "model_guided.py" in err


def test_a_device_s_local_memory_prunes_the_loopy_programs_over_it(cpu):
    """Each program's local temporaries are the spec's local memory: FD's lsize x lsize float
    tile (lsize 6..30) on a device with 1 KiB keeps lsize <= 16."""
    import dataclasses

    from perfport._core import Problem
    from perfport._core.signature import read_signature
    from perfport.model.tunable import loopy_spec
    from perfport.space import kernel_space

    spec = loopy_spec("loopy-fd")
    # Every program's parameter list in the #if chain is read (test_signature reads two).
    assert read_signature(spec.source, spec.entry, spec.language) is not None
    small = dataclasses.replace(cpu, local_mem_bytes=1024)
    space = kernel_space(spec, Problem.of(n=N), small)
    kept = sorted(space.config(i)["lsize"] for i in range(len(space)))
    assert kept == [6, 10, 16]
    assert len(kernel_space(spec, Problem.of(n=N), cpu)) == 6


def test_a_calibration_with_negative_costs_is_flagged(tmp_path, capsys, cpu):
    from model_support import GUIDED_COSTS

    cal = calibration_file(tmp_path / "cal.json", cpu.name, {**GUIDED_COSTS, "p_group": -1e-6})
    argv = ["tune", "loopy-fd", "--strategy", "model_guided", "--calibration", cal, "--problem",
            f"n={N}", "--db", str(tmp_path / "r.db"), "--budget", "1", "--confirm", "0", "--json"]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "negative costs (p_group)" in err and "--nonnegative" in err


PLAIN = """
import loopy as lp
import numpy as np

kernel = lp.split_iname(lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = 2 * x[i]",
                                       [lp.GlobalArg("x,y", np.float32, shape=("n",)),
                                        lp.ValueArg("n", np.int32)], lang_version=(2018, 2)),
                        "i", 16, outer_tag="g.0", inner_tag="l.0")
"""


def test_a_loopy_kernel_file_is_named_for_what_it_is(tmp_path, capsys, store_file, cpu):
    # It said the file "is not a loopy kernel".
    path = tmp_path / "plain.py"
    path.write_text(PLAIN)
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    argv = ["tune", str(path), "--strategy", "model_guided", "--calibration", cal]
    err = _refused(argv, capsys, store_file)
    assert "defines one loopy kernel, nothing to search" in err and "program(config)" in err


MADE = PLAIN.replace("kernel = ", "def make_kernel():\n    return ")


def test_a_make_kernel_file_is_named_for_what_it_is(tmp_path, capsys, store_file, cpu):
    # model_guided said it "is not a loopy kernel, so loopy cannot count it"; plain tune named
    # 'model stats' only, not 'model measure', which times it.
    path = tmp_path / "made.py"
    path.write_text(MADE)
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    argv = ["tune", str(path), "--strategy", "model_guided", "--calibration", cal]
    err = _refused(argv, capsys, store_file)
    assert "defines one loopy kernel, nothing to search" in err and "not a loopy" not in err
    assert f"'perfport model measure {path} --sizes n=...' times" in err
    err = _refused(["tune", str(path)], capsys, store_file)
    assert "'perfport model stats' counts" in err and f"perfport model measure {path}" in err
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN)
    assert f"perfport model measure {plain}" in _refused(["tune", str(plain)], capsys, store_file)


def test_perfport_kernels_lists_the_loopy_kernels_by_the_model_s_names(capsys):
    """`perfport kernels` left out the loopy kernels `perfport tune` takes by name."""
    from perfport.kernels import LOOPY_BUILTINS
    from perfport.model.tunable import loopy_kernels

    assert tuple(loopy_kernels()) == LOOPY_BUILTINS
    assert main(["kernels", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["loopy_kernels"] == list(LOOPY_BUILTINS)
    assert main(["kernels"]) == 0
    assert "loopy-matmul, loopy-dg, loopy-fd" in capsys.readouterr().out
    assert main(["tune", "nosuch"]) == 2
    assert "loopy-fd" in capsys.readouterr().err


# Last in the file: they empty loopy_spec's cache, which the tests above share.
def test_without_the_model_extra_the_error_names_it(tmp_path, capsys, store_file, cpu, monkeypatch):
    import sys

    from perfport.model.tunable import loopy_spec

    loopy_spec.cache_clear()
    monkeypatch.setitem(sys.modules, "loopy", None)  # as if loopy were not installed
    cal = calibration_file(tmp_path / "cal.json", cpu.name)
    argv = ["tune", "loopy-fd", "--strategy", "model_guided", "--calibration", cal]
    assert "pip install 'perfport[model]'" in _refused(argv, capsys, store_file)


def test_tune_without_the_model_extra_names_it(capsys, store_file, monkeypatch):
    # _program_spec imported loopy.preprocess before its check: a ModuleNotFoundError traceback.
    import sys

    from perfport.model.tunable import loopy_spec

    loopy_spec.cache_clear()
    for module in ("loopy", "loopy.preprocess"):  # as if loopy were not installed
        monkeypatch.setitem(sys.modules, module, None)
    argv = ["tune", "loopy-fd", "--budget", "2"]
    assert "pip install 'perfport[model]'" in _refused(argv, capsys, store_file)
