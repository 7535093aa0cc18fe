"""``perfport tune FILE.py`` of a user's loopy space file (``perfport.model.loopy_file``):
the example tunes on PoCL, verified, with the default strategy and model-guided; a file that
lacks what tuning needs is refused in one line, exit 2, before anything is measured."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from model_support import LOOPY, calibration_file

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "loopy_transpose.py")
N = 256  # a multiple of every tile of the example: all 12 configurations fit

SCALE = """
import loopy as lp
import numpy as np

params = {"wg": [16, 32]}
sizes = {"n": 256}


def program(config):
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = 2 * x[i]",
                         [lp.GlobalArg("x", np.float32, shape=("n",)),
                          lp.GlobalArg("y", np.float32, shape=("n",)),
                          lp.ValueArg("n", np.int32)],
                         assumptions="n >= 1", lang_version=(2018, 2))
    return lp.split_iname(knl, "i", config["wg"], outer_tag="g.0", inner_tag="l.0")


def reference(problem, inputs):
    return {"y": 2 * inputs["x"]}
"""


def _tune(argv: list[str], capsys, status: int = 0) -> dict:
    assert main(["tune", *argv, "--confirm", "0", "--json"]) == status
    return json.loads(capsys.readouterr().out)


def _legal(config: dict) -> bool:
    """The example's constraint and fits rule at N, written out here so a wrong space fails."""
    constraint = config["staged"] == 0 or config["coalesce"] == "write"
    return constraint and N % config["wg_x"] == 0 and N % config["wg_y"] == 0


# One configuration of each kind (unstaged reading and writing along rows, staged), at
# different tiles: PoCL builds each program in about a second.
KINDS = [{"staged": 0, "coalesce": "read", "wg_x": 16, "wg_y": 4},
         {"staged": 0, "coalesce": "write", "wg_x": 32, "wg_y": 8},
         {"staged": 1, "coalesce": "write", "wg_x": 32, "wg_y": 4}]  # fmt: skip


@pytest.mark.parametrize(
    "every",  # the fast suite runs KINDS; every one of the twelve is slow
    [False, pytest.param(True, marks=pytest.mark.slow)],
)
def test_the_example_tunes_verified_with_the_default_strategy(tmp_path, capsys, every):
    argv = [EXAMPLE, "--problem", f"n={N}", "--db", str(tmp_path / "r.db")]
    expected = 12
    if not every:
        (tmp_path / "configs.json").write_text(json.dumps(KINDS))
        argv += ["--configs", str(tmp_path / "configs.json")]
        expected = len(KINDS)
    out = _tune(argv, capsys)
    assert out["kernel"] == "loopy_transpose" and out["problem"] == {"n": N}
    # 2 x 2 x 2 x 2 = 16, less the 4 staged 'read' twins: every one run is right.
    assert out["configs_total"] == 12 and out["measured"] == expected
    assert out["outcomes"]["ok"] == expected and out["outcomes"]["wrong_result"] == 0
    assert out["verification"] == "numpy reference" and out["unverified"] == 0
    best = out["best"]
    assert best["verified"] is True and _legal(best["config"])


def test_the_example_tunes_model_guided_fastest_predicted_first(tmp_path, capsys, cpu, monkeypatch):
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
    argv = [EXAMPLE, "--strategy", "model_guided", "--calibration", cal, "--problem", f"n={N}",
            "--db", str(tmp_path / "r.db"), "--budget", "3"]  # fmt: skip
    out = _tune(argv, capsys)
    assert out["strategy"] == "model_guided" and out["measured"] == 3
    assert out["verification"] == "numpy reference" and out["best"]["verified"] is True
    assert _legal(out["best"]["config"])
    space = kernel_space(loopy_spec(EXAMPLE), {"n": N}, cpu)
    # The statistics tune counted, from its cache folder: the same, not counted again.
    ranker = guided_ranker(loopy_space(EXAMPLE), Calibration.load(cal), [], {"n": N}, space,
                           StatsCache(_cache_folder()))  # fmt: skip
    predicted = ranker.predict()
    assert not np.isnan(predicted).any() and len(set(predicted)) > 1  # the model tells them apart
    assert asked[0] == int(np.argmin(predicted))


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "mine.py"
    path.write_text(text)
    return str(path)


def test_a_file_without_a_reference_tunes_unverified(tmp_path, capsys):
    kernel = _file(tmp_path, SCALE.split("\n\ndef reference")[0])
    out = _tune([kernel, "--db", str(tmp_path / "r.db")], capsys)
    assert out["kernel"] == "mine" and out["outcomes"]["ok"] == 2
    assert out["verification"] == "not verified" and out["unverified"] == 2
    assert out["warnings"] == ["2 of 2 correct-looking results are not verified: not verified"]


def test_a_wrong_reference_fails_every_configuration(tmp_path, capsys):
    kernel = _file(tmp_path, SCALE.replace('{"y": 2 * inputs["x"]}', '{"y": 3 * inputs["x"]}'))
    out = _tune([kernel, "--db", str(tmp_path / "r.db")], capsys, status=1)  # none correct
    assert out["outcomes"]["wrong_result"] == 2 and out["outcomes"]["ok"] == 0


def _refused(argv: list[str], capsys) -> str:
    assert main(["tune", *argv, "--json"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and "Traceback" not in err
    assert err.startswith("perfport: error: ") and "\n" not in err
    return err


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("def program(", "def make(", "defines no function 'program'; define program(config)"),
        ('params = {"wg": [16, 32]}', "", "defines no 'params'; define params = {name: values}"),
        ('params = {"wg": [16, 32]}', 'params = {"wg": []}', "params: parameter wg: give at least"),
        ('params = {"wg": [16, 32]}', "params = 5", "params: must be {name: values}"),
        ('params = {"wg": [16, 32]}', 'param = {"wg": [16]}', "did you mean 'params'"),
        ('sizes = {"n": 256}', 'sizes = {"n": 256}\nnames = ["y"]',
         "did you mean 'name'? (a name of the file's own: start it with '_'"),
        ('sizes = {"n": 256}', 'sizes = {"n": 256}\nconstraints = ["n % wg == 0"]',
         "names 'n', not a parameter; a rule over the problem's sizes belongs in fits"),
        ('sizes = {"n": 256}', 'sizes = {"n": 256}\nfits = "m % wg == 0"',
         "fits names 'm', neither a parameter nor a size"),
        ('sizes = {"n": 256}', 'sizes = {"n": "big"}', "sizes must map size names to whole"),
        ('sizes = {"n": 256}', "sizes = {}", "take size n, which has no default; add it to sizes"),
        ("    knl = lp.make", "    1 / 0\n    knl = lp.make",
         "program({'wg': 16}) raised ZeroDivisionError"),
        ("    return lp.split_iname(", "    return 7\n    lp.split_iname(",
         "program({'wg': 16}) returned int, not a loopy kernel"),
        ("def reference(problem, inputs):", "reference = 1\ndef ref(problem, inputs):",
         "reference must be a function reference(problem, inputs)"),
        ('outer_tag="g.0", inner_tag="l.0"', 'outer_tag="g.0", inner_tag="l.5"',
         "loopy cannot generate code for configuration {'wg': 16}"),
    ],
)  # fmt: skip
def test_a_file_lacking_what_tuning_needs_is_refused(tmp_path, capsys, old, new, says):
    assert old in SCALE
    kernel = _file(tmp_path, SCALE.replace(old, new))
    db = tmp_path / "r.db"
    err = _refused([kernel, "--db", str(db)], capsys)
    assert says in err and kernel in err
    assert not db.exists()  # refused before the store is opened


def test_a_reference_that_raises_stops_the_run_in_one_line(tmp_path, capsys):
    """Found when tune first checks an output (as for any spec's reference): after the
    progress line, one error line and exit 2."""
    kernel = _file(tmp_path, SCALE.replace('return {"y": 2 * inputs["x"]}', 'return {"y": x}'))
    assert main(["tune", kernel, "--db", str(tmp_path / "r.db"), "--json"]) == 2
    captured = capsys.readouterr()
    last = captured.err.strip().splitlines()[-1]
    assert captured.out == "" and "Traceback" not in captured.err
    assert last.startswith("perfport: error: kernel mine: the numpy reference raised NameError")


def test_the_control_file_tunes(tmp_path, capsys):
    """The file the refusals edit is itself good: each refusal is the edit's."""
    out = _tune([_file(tmp_path, SCALE), "--db", str(tmp_path / "r.db")], capsys)
    assert out["outcomes"]["ok"] == 2 and out["verification"] == "numpy reference"


def test_other_commands_say_only_tune_runs_a_space_file(capsys):
    assert main(["space", EXAMPLE]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a loopy space file" in err and "perfport tune" in err


def test_a_kernel_spec_file_that_names_its_source_program_tunes_as_a_spec(tmp_path, capsys):
    """``kernel`` makes a file a KernelSpec file, even beside a ``program`` of its own."""
    saxpy = Path(__file__).parents[2] / "examples" / "saxpy.py"
    path = tmp_path / "saxpy_program.py"
    path.write_text(saxpy.read_text().replace("SOURCE", "program"))
    out = _tune([str(path), "--budget", "1", "--db", str(tmp_path / "r.db")], capsys)
    assert out["kernel"] == "saxpy" and out["outcomes"]["ok"] == 1


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("x = 1\n", "it defines neither 'kernel' nor 'make_kernel()'"),
        ("def make_kernel():\n    return None\n", "its make_kernel() returned nothing (None)"),
        ("kernel = 5\n", "its 'kernel' is of type int, not a loopy kernel"),
    ],
)
def test_a_kernel_file_without_a_kernel_says_what_to_define(tmp_path, capsys, text, found):
    """It said '...; found NoneType'."""
    path = tmp_path / "k.py"
    path.write_text(text)
    assert main(["model", "stats", str(path)]) == 2
    err = capsys.readouterr().err
    assert found in err and "define 'kernel'" in err and "NoneType" not in err
    assert err.count("\n") == 1


def test_model_stats_says_a_space_file_is_one(capsys):
    """It said 'define kernel ...; found NoneType'."""
    assert main(["model", "stats", EXAMPLE]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a loopy space file" in err and "NoneType" not in err


def test_a_problem_no_configuration_fits_names_the_fits_rule(tmp_path, capsys):
    # It ended "see 'perfport space'", which refuses loopy space files.
    path = tmp_path / "scale.py"
    path.write_text(SCALE.replace('sizes = {"n": 256}', 'sizes = {"n": 256}\nfits = "n % wg == 0"'))
    argv = ["tune", str(path), "--problem", "n=20", "--db", str(tmp_path / "r.db"), "--json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "removed by: n % wg == 0 (2)" in err and "perfport space" not in err
    assert "pick a --problem the kernel's fits rule allows" in err
