"""experiments/2026-11-22-wg-repeatability/wg_sweep_repeatability.py: two sweeps' agreement, and the shipped runs load."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from conftest import experiment_script, load_experiment

SCRIPT = experiment_script("wg_sweep_repeatability")
module = load_experiment("wg_sweep_repeatability")


def test_identical_runs_reach_their_ceiling():
    t = np.array([2.0, 1.0, 4.0, np.nan])
    out = module.compare(t, t.copy())
    assert out["sizes"] == 3 and out["first_best_on_second"] == 1.0
    assert out["second_best_on_first"] == 1.0 and abs(out["corr_log_t"] - 1.0) < 1e-12


def test_a_swapped_best_costs_its_ratio():
    first = np.array([1.0, 2.0, 4.0])
    second = np.array([2.0, 1.0, 4.0])  # the best sizes swap places
    out = module.compare(first, second)
    assert out["first_best_on_second"] == 0.5 and out["second_best_on_first"] == 0.5
    assert out["median_over_best"] == 2.0


def test_shipped_runs():
    done = subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert len(rows) == 12 and {r["kernel"] for r in rows} == {"heat", "gol", "sobel"}
    assert all(0.0 < r["first_best_on_second"] <= 1.0 and r["sizes"] == 229 for r in rows)
