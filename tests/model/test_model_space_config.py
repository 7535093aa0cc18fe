"""``perfport model stats|predict FILE --config NAME=VALUE ...``: one configuration of a loopy
space file is counted and predicted as a kernel file is; a configuration that is not one of
the file's is refused in one line, exit 2, naming the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_support import LOOPY, calibration_file

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "loopy_transpose.py")
CONFIG = ["--config", "wg_x=32", "wg_y=8", "coalesce=write", "staged=0"]


def test_stats_counts_the_configuration_chosen(capsys):
    assert main(["model", "stats", EXAMPLE, *CONFIG, "--problem", "n=256", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["thread_groups"]["value"] == (256 // 32) * (256 // 8)
    assert report["work_group_size"]["value"] == 32 * 8


def test_predict_predicts_the_configuration_chosen(tmp_path, capsys):
    calibration = calibration_file(tmp_path / "c.json", "pthread-cpu")
    args = ["model", "predict", calibration, EXAMPLE, *CONFIG, "--problem", "n=256", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["predicted_ms"] > 0


@pytest.mark.parametrize(
    ("config", "hint"),
    [
        (["wg_x=32"], "needs a value for staged, coalesce, wg_y; e.g. --config"),
        ([*CONFIG[1:], "zz=1"], "has no parameter 'zz'; its parameters are"),
        (["wg_x=33", *CONFIG[2:]], "wg_x takes 16, 32"),
        ([*CONFIG[1:], "wg_x=16"], "wg_x is given twice"),
        (["wg_x=32", "wg_y=8", "coalesce=read", "staged=1"], "breaks the file's constraints"),
    ],
)
def test_a_configuration_not_in_the_file_is_one_line(config, hint, capsys):
    assert main(["model", "stats", EXAMPLE, "--config", *config]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hint in err and "Traceback" not in err


def test_config_on_a_kernel_file_says_to_drop_it(tmp_path, capsys):
    assert main(["model", "stats", "matmul-prefetch", "--config", "a=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "drop --config" in err


@pytest.mark.parametrize("command", ["stats", "predict"])
def test_a_configuration_that_does_not_fit_the_problem_is_refused(tmp_path, capsys, command):
    # tune excludes it by the file's fits; stats and predict counted it anyway.
    before = [calibration_file(tmp_path / "c.json", "pthread-cpu")] if command == "predict" else []
    argv = ["model", command, *before, EXAMPLE, *CONFIG, "--problem", "n=1000"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "does not fit --problem n=1000 (fits: n % wg_x == 0" in err and err.count("\n") == 1
    assert main(["model", "stats", EXAMPLE, *CONFIG]) == 0  # no --problem: counts stay symbolic


def test_the_file_s_default_sizes_are_used_where_problem_gives_none(tmp_path, capsys):
    # tune takes the file's sizes = {"n": 1024}; stats and predict said "needs a value for n".
    calibration = calibration_file(tmp_path / "c.json", "pthread-cpu")
    assert main(["model", "predict", calibration, EXAMPLE, *CONFIG, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sizes"] == {"n": 1024}
    assert main(["model", "stats", EXAMPLE, *CONFIG, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sizes"] == {"n": 1024}
    assert report["thread_groups"]["value"] == (1024 // 32) * (1024 // 8)
    assert main(["model", "stats", EXAMPLE, *CONFIG, "--problem", "n=256", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sizes"] == {"n": 256}  # --problem wins
