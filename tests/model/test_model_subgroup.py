"""The sub-group width loopy counts with: the device's where one is known (calibrate, evaluate
--db, evaluate --kernel, model-guided tune), --subgroup-size where given; 32 before, always,
so a 64-wide device (AMD's wavefronts) could not be modelled from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import pytest
from model_support import LOOPY, calibration_file

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)
pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def wide(cpu, monkeypatch):
    """The test device as if it reported 64-wide sub-groups, and the default device."""
    device = dataclasses.replace(cpu, subgroup_size=64)
    # perfport.devices is also a function of the facade: the module itself, by its name
    monkeypatch.setattr(sys.modules["perfport.devices"], "get_device", lambda *_: device)
    return device


def test_predict_counts_with_the_subgroup_size_given(tmp_path, capsys):
    cal = calibration_file(tmp_path / "cal.json", "dev")
    argv = ["model", "predict", cal, "matmul-noprefetch", "--problem", "n=128", "--json"]
    times = {}
    for size in (32, 64):
        assert main([*argv, "--subgroup-size", str(size)]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["subgroup_size"] == size
        times[size] = report["predicted_ms"]
    assert times[32] != times[64]  # some counts are per sub-group
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 32  # no device: the paper's


def test_calibrate_and_evaluate_count_with_the_device_s_width(tmp_path, capsys, wide):
    from test_model_fit import APPS, TRAIN, _fill, _model_file, _times

    db = tmp_path / "c.db"
    _fill(db, wide, TRAIN + APPS, _times(TRAIN + APPS))
    argv = ["model", "calibrate", str(_model_file(tmp_path)), "--db", str(db), "--out",
            str(tmp_path / "cal.json"), "--json"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 64
    assert main([*argv, "--subgroup-size", "32"]) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 32
    # The calibration keeps the width it was counted with, and predict counts alike by default
    # (it counted with 32 whatever the calibration's).
    assert main([*argv[:-1], "--out", str(tmp_path / "wide.json"), "--json"]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "wide.json").read_text())["subgroup_size"] == 64
    predict = ["model", "predict", str(tmp_path / "wide.json"), "matmul-noprefetch",
               "--problem", "n=128", "--json"]  # fmt: skip
    assert main(predict) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 64
    assert main([*predict, "--subgroup-size", "32"]) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 32
    evaluate = ["model", "evaluate", "--db", str(db), "--model", str(_model_file(tmp_path))]
    assert main([*evaluate, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 64
    # 32, counted by the calibration above, where the device's is 64
    assert main([*evaluate, "--subgroup-size", "32", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["subgroup_size"] == 32


def test_model_guided_counts_with_the_tuned_device_s_width(tmp_path, wide, monkeypatch):
    from perfport.cli.guided import ranker_factory
    from perfport.model import tunable

    seen = []
    monkeypatch.setattr(tunable, "guided_ranker", lambda *a, **k: seen.append(a[5]))
    cal = calibration_file(tmp_path / "cal.json", wide.name)
    args = argparse.Namespace(calibration=cal, db=str(tmp_path / "none.db"))
    build = ranker_factory(args, None, None, wide)
    monkeypatch.setattr("perfport.cli.guided._uncovered", lambda *a: [])
    build(None, {}, None)
    assert seen[0].subgroup_size == 64


def test_a_width_no_calibration_file_could_keep_is_refused(tmp_path, capsys):
    # calibrate --subgroup-size 2048 would write a subgroup_size the file loader refuses.
    cal = calibration_file(tmp_path / "cal.json", "dev")
    with pytest.raises(SystemExit):
        main(["model", "predict", cal, "matmul-noprefetch", "--problem", "n=128",
              "--subgroup-size", "2048"])  # fmt: skip
    assert "at most 1024" in capsys.readouterr().err
