"""``perfport model evaluate --calibration CAL --kernel FILE.py``: a calibration's predictions
of a user's own loopy kernel, measured on PoCL by ``perfport tune FILE.py`` (a space file)
or ``perfport model measure FILE.py`` (a kernel file), reported with ``evaluate``'s keys;
what it cannot evaluate is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_support import LOOPY, calibration_file

from perfport.cli import main

pytest.importorskip("loopy", reason=LOOPY)
pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

BODY = """
import loopy as lp
import numpy as np


def _knl():
    return lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = FACTOR * x[i]",
                          [lp.GlobalArg("x", np.float32, shape=("n",)),
                           lp.GlobalArg("y", np.float32, shape=("n",)),
                           lp.ValueArg("n", np.int32)],
                          assumptions="n >= 1", lang_version=(2018, 2))
"""
SPACE = (
    BODY
    + """
params = {"wg": [16, 32]}
sizes = {"n": 256}


def program(config):
    return lp.split_iname(_knl(), "i", config["wg"], outer_tag="g.0", inner_tag="l.0")


def reference(problem, inputs):
    return {"y": FACTOR * inputs["x"]}
"""
)
KERNEL = (
    BODY
    + """
kernel = lp.split_iname(_knl(), "i", 16, outer_tag="g.0", inner_tag="l.0")
"""
)
SIZES = (256, 512)


@pytest.fixture(scope="module")
def measured(tmp_path_factory, cpu):
    """A space file (two configurations) tuned at two sizes, a kernel file measured at two,
    both into one store, and a calibration of the device."""
    folder = tmp_path_factory.mktemp("evaluate-file")
    space, kernel, db = folder / "scale.py", folder / "scale_knl.py", folder / "r.db"
    space.write_text(SPACE.replace("FACTOR", "2"))
    kernel.write_text(KERNEL.replace("FACTOR", "2"))
    for n in SIZES:
        assert main(["tune", str(space), "--problem", f"n={n}", "--db", str(db), "--confirm",
                     "0", "--json"]) == 0  # fmt: skip
    sizes = "n=" + ",".join(map(str, SIZES))
    assert main(["model", "measure", str(kernel), "--sizes", sizes, "--db", str(db), "--json"]) == 0
    cal = calibration_file(folder / "cal.json", cpu.name)
    return {"space": str(space), "kernel": str(kernel), "db": str(db), "cal": cal, "dir": folder}


def _evaluate(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["model", "evaluate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_space_file_s_configurations_are_evaluated(measured, capsys, cpu):
    out = _evaluate(capsys, "--calibration", measured["cal"], "--kernel", measured["space"],
                    "--db", measured["db"])  # fmt: skip
    assert {r["variant"] for r in out["results"]} == {"scale wg=16", "scale wg=32"}
    for r in out["results"]:
        assert r["device"] == cpu.name and r["n_sizes"] == len(SIZES)
        assert r["geomean_rel_error"] > 0
        assert all(p["measured_ms"] > 0 and p["predicted_ms"] > 0 for p in r["points"])
    assert isinstance(out["ranking_correct"], bool) and out["geomean_rel_error"] > 0


def test_a_kernel_file_s_measurements_are_evaluated(measured, capsys):
    out = _evaluate(capsys, "--calibration", measured["cal"], "--kernel", measured["kernel"],
                    "--db", measured["db"])  # fmt: skip
    (result,) = out["results"]
    assert result["variant"] == "scale_knl" and result["n_sizes"] == len(SIZES)
    assert out["kernel"] == "app-scale_knl"


def test_the_calibration_s_sub_group_width_counts_as_predict_counts(measured, capsys, tmp_path):
    # evaluate --kernel counted with the store device's width (32 on PoCL, which reports none)
    # and ignored the width the calibration was made with: predict gave another time.
    data = json.loads(Path(measured["cal"]).read_text())
    cal = tmp_path / "wide.json"
    cal.write_text(json.dumps({**data, "subgroup_size": 64}))
    out = _evaluate(capsys, "--calibration", str(cal), "--kernel", measured["kernel"],
                    "--db", measured["db"])  # fmt: skip
    assert out["subgroup_size"] == 64
    for point in out["results"][0]["points"]:
        n = point["sizes"]["n"]
        assert main(["model", "predict", str(cal), measured["kernel"], "--problem", f"n={n}",
                     "--json"]) == 0  # fmt: skip
        predicted = json.loads(capsys.readouterr().out)
        assert predicted["subgroup_size"] == 64
        assert predicted["predicted_ms"] == pytest.approx(point["predicted_ms"])


def test_the_text_report_names_each_configuration(measured, capsys):
    capsys.readouterr()
    argv = ["model", "evaluate", "--calibration", measured["cal"], "--kernel", measured["space"],
            "--db", measured["db"]]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "scale wg=16 on " in out and "overall geomean relative error" in out


def _refused(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(["model", "evaluate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("perfport: error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_a_file_that_is_not_a_loopy_file_is_refused(measured, capsys):
    other = measured["dir"] / "other.py"
    other.write_text("x = 1\n")
    err = _refused(capsys, "--calibration", measured["cal"], "--kernel", str(other),
                   "--db", measured["db"])  # fmt: skip
    assert "not a loopy file" in err and "loopy space file" in err
    err = _refused(capsys, "--calibration", measured["cal"], "--kernel", "nowhere.py")
    assert "no such .py file" in err


def test_a_kernel_without_measurements_is_refused(measured, capsys, tmp_path):
    from perfport.store import Store

    empty = tmp_path / "empty.db"
    with Store(empty):
        pass
    err = _refused(capsys, "--calibration", measured["cal"], "--kernel", measured["space"],
                   "--db", str(empty))  # fmt: skip
    assert "no measurements of scale" in err and f"perfport tune {measured['space']}" in err


def test_a_calibration_of_another_device_is_refused(measured, capsys, tmp_path):
    cal = calibration_file(tmp_path / "other.json", "Some Other GPU")
    err = _refused(capsys, "--calibration", cal, "--kernel", measured["space"],
                   "--db", measured["db"])  # fmt: skip
    assert "'Some Other GPU'" in err and "model calibrate" in err


def test_results_of_other_code_than_the_file_s_are_refused(measured, capsys, tmp_path):
    changed = tmp_path / "scale.py"  # same name in the store, other code
    changed.write_text(SPACE.replace("FACTOR", "3"))
    err = _refused(capsys, "--calibration", measured["cal"], "--kernel", str(changed),
                   "--db", measured["db"])  # fmt: skip
    assert "other code" in err and "measure it again" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--kernel", "x.py"], "add --calibration CAL"),
        (["--calibration", "c.json"], "add --kernel FILE.py"),
        (["--calibration", "c.json", "--kernel", "x.py", "--figures", "d"], "drop --figures"),
        (["--calibration", "c.json", "--kernel", "x.py", "--device", "pocl"], "drop --device"),
    ],
)
def test_flags_that_do_not_go_together_are_refused(argv, message, capsys):
    assert message in _refused(capsys, *argv)


def test_an_edited_kernel_file_is_measured_again(measured, capsys, tmp_path):
    # The store keeps the kernel by its file stem: the edited file's results must not be the
    # old code's, or the fix 'measure it again' would loop.
    db = tmp_path / "r.db"
    db.write_bytes((measured["dir"] / "r.db").read_bytes())
    edited = tmp_path / "scale_knl.py"
    edited.write_text(KERNEL.replace("FACTOR", "3"))
    capsys.readouterr()

    def measure() -> dict:
        argv = ["model", "measure", str(edited), "--sizes", "n=256", "--db", str(db), "--json"]
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)["counts"]

    assert measure() == {"measured": 1, "stored": 0, "failed": 0}
    assert measure() == {"measured": 0, "stored": 1, "failed": 0}
    out = _evaluate(capsys, "--calibration", measured["cal"], "--kernel", str(edited),
                    "--db", str(db))  # fmt: skip
    assert out["results"][0]["n_sizes"] == 1
