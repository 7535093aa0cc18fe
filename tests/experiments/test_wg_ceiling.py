"""experiments/2026-11-26-wg-cpu/wg_ceiling.py: the CPUs' noise ceilings beside the scores."""

from __future__ import annotations

import json

from conftest import load_experiment

module = load_experiment("wg_ceiling")


def test_the_shipped_sessions_match_scenario_for_scenario() -> None:
    s = module.sessions()
    assert s["ceiling"]["scenarios"] == 70 and s["ceiling"]["pairs"] == 140
    # Matched rows are the same scenario: their log times mostly correlate well.
    assert s["median_corr_log_t"] > 0.7
    assert 0.5 < s["ceiling"]["ceiling"] < 1.0


def test_the_report_has_every_cpu_collection_and_the_scores_beside(capsys) -> None:
    assert module.main(["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "xeon16-pocl-8x1" in report["rounds"]
    assert not any("h100" in name for name in report["rounds"])
    one = report["rounds"]["xeon16-pocl-8x1"]
    assert [c["rounds"] for c in one] == [1, 2, 4]
    assert "performance_forest+novel" in report["predictors"]["eval.json:kernel"]
