"""experiments/2026-11-22-wg-repeatability/wg_backends.py: two device set-ups, paired scenario by scenario."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import experiment_script, load_experiment

SCRIPT = experiment_script("wg_backends")
module = load_experiment("wg_backends")


def test_best_fixed_size_needs_every_row():
    times = np.array([[1.0, 2.0, np.nan], [2.0, 1.0, 0.5]])
    column, fractions = module.best_fixed(
        times
    )  # column 2 is best where it ran, but not everywhere
    assert column in (0, 1) and np.allclose(sorted(fractions), [0.25, 1.0])


@pytest.mark.slow
def test_shipped_pairs():
    done = subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["scenarios"] >= 100
    assert 0.0 < report["first_best_on_second"] <= 1.0 and 0.0 <= report["same_best_size"] <= 1.0
    gone = subprocess.run(
        [sys.executable, str(SCRIPT), "--second", "nothing"], capture_output=True, text=True
    )
    assert gone.returncode == 2 and "no scenario" in gone.stderr
