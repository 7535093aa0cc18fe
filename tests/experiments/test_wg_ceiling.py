"""experiments/2026-11-26-wg-cpu/wg_ceiling.py: the CPUs' noise ceilings beside the scores."""

from __future__ import annotations

import json

import numpy as np
import pytest

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


features = load_experiment("wg_cpu_features")


def test_portable_features_zero_a_cpus_pocl_settings_and_add_cells_per_unit() -> None:
    names = ("device_compute_units", "device_log2_local_mem", "device_log2_max_work_group",
             "device_log2_max_items_x", "device_log2_max_items_y", "device_is_cpu",
             "data_log2_cells")  # fmt: skip
    x = np.array([[16, 21, 12, 12, 12, 1, 18], [132, 15.6, 10, 10, 10, 0, 18]], dtype=float)
    out = features.portable_features(x, names)
    assert out.shape == (2, 8)
    assert out[0].tolist() == [16, 0, 0, 0, 0, 1, 18, 14]  # 2^18 cells over 16 threads
    assert out[1, :7].tolist() == x[1].tolist()  # a GPU keeps its limits
    assert out[1, 7] == pytest.approx(18 - np.log2(132))
    assert x[0, 1] == 21  # the input is not changed


def test_the_paired_interval_holds_a_difference_of_zero_for_equal_methods() -> None:
    a = np.array([0.9, 0.8, 1.0, 0.7])
    same = features.paired(a, a, seed=0)
    assert same["diff_points"] == 0 and same["diff_ci95"] == [0.0, 0.0]
    better = features.paired(a, np.minimum(a * 1.1, 1.0), seed=0)
    assert better["diff_points"] > 0 and better["diff_ci95"][0] > 0
