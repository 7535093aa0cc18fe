"""experiments/2026-11-23-select-live/select_live.py: a bundle fitted on the training shapes, run and checked on the
device, and the report's comparison of live and table times."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import load_experiment

module = load_experiment("select_live")
pytest.importorskip("sklearn.tree", reason="scikit-learn (the models extra)")


def run(monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.setattr(sys, "argv", ["select_live.py", *argv])
    return module.main()


@pytest.mark.slow
def test_fit_measure_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, cpu) -> None:
    bundle = tmp_path / "bundle"
    assert run(monkeypatch, "fit", "--out", str(bundle), "--kernels", "2") == 0
    rows = json.loads((bundle / "heldout.json").read_text())["rows"]
    assert len(rows) == 86  # 20% of the shipped table's 431 shapes
    live = tmp_path / "live.json"
    argv = ["measure", "--bundle", str(bundle), "--device", cpu.id, "--out", str(live)]
    assert run(monkeypatch, *argv, "--repeats", "1", "--limit", "1") == 0
    measured = json.loads(live.read_text())
    (problem,) = measured["problems"]
    assert problem["correct"] and len(problem["live_ms"]) == 2
    with pytest.raises(SystemExit, match="compare a device with its own table"):
        run(monkeypatch, "report", "--bundle", str(bundle), "--live", str(live))

    # Live times equal to the table's: the live and table comparisons agree exactly.
    table = module._table(None)
    shipped = [table.config_index(dict(c)) for c in module.load_bundle(bundle).configs]
    problems = [
        {"row": r, "pick": module.load_bundle(bundle).choose(module._problem(table, r)),
         "correct": True, "live_ms": table.times[r, shipped].tolist()}
        for r in rows
    ]  # fmt: skip
    configs = [dict(c) for c in module.load_bundle(bundle).configs]
    record = {"device": table.device, "data": None, "configs": configs, "problems": problems}
    live.write_text(json.dumps(record))
    capsys.readouterr()
    assert run(monkeypatch, "report", "--bundle", str(bundle), "--live", str(live), "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    live_vs_table = summary["pick_vs_best_shipped_live"] / summary["pick_vs_best_shipped_table"]
    assert live_vs_table == pytest.approx(1.0)
    assert summary["fastest_shipped_agrees"] == 1.0 and summary["problems"] == 86
    assert 0.5 < summary["pick_vs_optimum_table"] <= summary["pick_vs_best_shipped_table"] <= 1.0
    assert summary["picks_failed"] == 0

    # A pick that failed live is counted, not scored; a problem where nothing ran is skipped.
    problems[0]["live_ms"][problems[0]["pick"]] = None
    problems[1]["live_ms"] = [None, None]
    live.write_text(json.dumps({**record, "problems": problems}))
    assert run(monkeypatch, "report", "--bundle", str(bundle), "--live", str(live), "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["picks_failed"] == 2 and summary["fastest_shipped_agrees"] == 1.0
    # A live file of another bundle, or one dispatched otherwise, is refused.
    live.write_text(json.dumps({**record, "configs": configs[::-1]}))
    with pytest.raises(SystemExit, match="not measured with the bundle"):
        run(monkeypatch, "report", "--bundle", str(bundle), "--live", str(live))
    problems[2]["pick"] = 1 - problems[2]["pick"]
    live.write_text(json.dumps({**record, "problems": problems}))
    with pytest.raises(SystemExit, match="dispatched to another configuration"):
        run(monkeypatch, "report", "--bundle", str(bundle), "--live", str(live))
