"""experiments/2026-11-24-wg-live/wg_live.py: measuring on the local device and reporting, end to end at a small
size; and the report of a committed live run, recomputed from its stored times."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from conftest import experiment_script, load_experiment

module = load_experiment("wg_live")
LIVE = experiment_script("wg_live").parent


@pytest.mark.slow
def test_measure_then_report(tmp_path, capsys, cpu):
    pytest.importorskip("sklearn")
    pytest.importorskip("llvmlite")
    out = tmp_path / "live"
    module.measure(argparse.Namespace(device=cpu.id, out=str(out), sizes=[64], rounds=2,
                                      kernels=["cross"]))  # fmt: skip
    (row,) = module._measured(out)
    assert row["kernel"] == "cross" and row["problem"]["width"] == 64
    assert all(len(v) == 10 for v in row["samples"].values())  # 2 rounds of 5 launches
    module.report(argparse.Namespace(dirs=[str(out)], json=True))
    (scenario,) = json.loads(capsys.readouterr().out)["scenarios"]
    times = {k: t for k, t in row["times"].items() if t is not None}
    for method in module.METHODS:
        wc, wr = scenario[method]["wg"]
        assert scenario[method]["fraction"] == pytest.approx(min(times.values()) / times[(wc, wr)])


@pytest.mark.slow
def test_the_committed_report_follows_from_the_stored_times(capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("llvmlite")
    rows = module._measured(LIVE / "xeon-1")  # cut off: only gaussian r=2 is complete
    assert [(r["kernel"], r["problem"]["width"]) for r in rows] == [
        ("gaussian[r=2]", 512), ("gaussian[r=2]", 1024)
    ]  # fmt: skip
    module.report(argparse.Namespace(dirs=[str(LIVE / "h100-opencl")], json=True))
    got = json.loads(capsys.readouterr().out)
    committed = json.loads((LIVE / "h100-opencl.json").read_text())
    # What does not depend on the trained models (scikit-learn versions may differ).
    fixed = [m for m in committed["geomean"] if m not in module.METHODS]
    assert len(fixed) == 3 and got["halves"] == pytest.approx(committed["halves"])
    assert all(isinstance(s["novel"], bool) for s in got["scenarios"])
    assert {m: got["geomean"][m] for m in fixed} == pytest.approx(
        {m: committed["geomean"][m] for m in fixed}
    )
    # The fixed sizes' fractions, from the times alone.
    rows = module._measured(LIVE / "h100-opencl")
    expert = [min(t for t in r["times"].values() if t) / r["times"][(32, 4)] for r in rows]
    assert got["geomean"]["w(32x4)"] == pytest.approx(np.exp(np.mean(np.log(expert))))
    assert len(rows) == 12 and all(len(r["times"]) == 143 for r in rows)


def _geomean(values):
    return float(np.exp(np.mean(np.log(values))))


def test_the_committed_sweeps_are_found_as_measured():
    # box5's described source gained a guard since it was timed: the stored kernel is used.
    rows = module._measured(LIVE / "h100-opencl")
    assert sorted({r["kernel"] for r in rows}) == [
        "box5",
        "cross",
        "gaussian[r=2]",
        "gaussian[r=4]",
    ]
    assert len(rows) == 12 and all(r["launches"] == 5 for r in rows)
    box5 = next(r for r in rows if r["kernel"] == "box5")
    assert "guarded_get" not in box5["spec"].source and not box5["spec"].fault_flag


def test_heldout_scores_follow_from_the_rounds():
    rows = module._measured(LIVE / "h100-opencl")
    choices = {"w(32x4)": [(32, 4)] * len(rows)}
    halves, alternate = module._heldout(rows, choices)
    assert (halves["split"], halves["rounds"], alternate["split"]) == ("halves", 8, "alternate")
    scores = {s["choice"]: s for s in halves["scores"]}
    assert list(scores) == ["oracle", "w(32x4)"]
    # By hand: rounds 1-4 pick the fastest size, timed against 32x4 on rounds 5-8, and back.
    ratios, same = [], []
    for r in rows:
        first = {k: np.median(v[:20]) for k, v in r["samples"].items()}
        second = {k: np.median(v[20:]) for k, v in r["samples"].items()}
        a, b = min(first, key=first.get), min(second, key=second.get)
        ratios.append(np.sqrt(second[a] / second[(32, 4)] * first[b] / first[(32, 4)]))
        same.append(min(t for t in r["times"].values() if t) / r["times"][(32, 4)])
    got = scores["w(32x4)"]
    assert got["scenarios"] == 12 and got["heldout"] == pytest.approx(_geomean(ratios))
    assert got["same_table"] == pytest.approx(_geomean(same))
    low, high = got["heldout_ci95"]
    assert low < got["heldout"] < high
    assert scores["oracle"]["same_table"] == pytest.approx(1.0)


def test_samples_that_do_not_cut_into_rounds_are_refused():
    rows = module._measured(LIVE / "h100-opencl")[:1]
    with pytest.raises(SystemExit, match="two or more equal rounds"):
        module._heldout([{**rows[0], "launches": None}], {})
    with pytest.raises(SystemExit, match="two or more equal rounds"):
        module._heldout([{**rows[0], "launches": 40}], {})  # one round of 40 launches
