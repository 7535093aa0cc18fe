"""experiments/2026-11-22-wg-repeatability/wg_rounds.py: ceilings of n-round protocols from one interleaved collection."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import experiment_script, fill_wg_campaign, load_experiment

SCRIPT = experiment_script("wg_rounds")
module = load_experiment("wg_rounds")


def test_noiseless_rounds_reach_the_ceiling_and_a_drifting_round_does_not():
    truth = np.array([1.0, 1.1, 1.3, 2.0])
    samples = np.broadcast_to(truth[:, None, None], (4, 8, 2)).copy()[None]  # 1 scenario
    (one, two, four) = module.protocol_ceilings(samples)
    assert [p["rounds"] for p in (one, two, four)] == [1, 2, 4]
    assert [p["pairs"] for p in (one, two, four)] == [4, 2, 1]
    assert one["first_best_on_second"] == 1.0 and four["noise"] == 0.0
    samples[0, 0, 0] = 1.5  # round 0 slows the best size: that round's oracle picks 1.1
    (one, two, four) = module.protocol_ceilings(samples)
    # Round 0 alone picks size 1 (1.1 where size 0 takes 1.0), and round 1's pick, size 0, takes
    # 1.5 in round 0; four rounds outvote the slow one.
    assert one["worst"] == pytest.approx(1.1 / 1.5) and one["first_best_on_second"] < 1.0
    assert four["first_best_on_second"] == four["second_best_on_first"] == 1.0


def test_collection_to_samples_file(db, cpu, tmp_path):
    from perfport.store import Store

    with Store(db) as store:  # 2 rounds x 2 launches per size
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0, samples=4)
    data, samples = module.samples_from_db(db, rounds=2)
    assert samples.shape == (1, len(data.sizes), 2, 2)
    ran = np.isfinite(data.runtimes[0])
    assert np.isfinite(samples[0, ran]).all() and np.isnan(samples[0, ~ran]).all()
    out = tmp_path / "x.samples.npz"
    module.save_samples(out, data, samples)
    done = subprocess.run([sys.executable, str(SCRIPT), "--samples", str(out), "--json"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run,) = json.loads(done.stdout)
    assert run["rounds"] == 2 and run["repeats"] == 2 and len(run["protocols"]) == 1


def test_shipped_collections():
    done = subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    runs = {r["samples"]: r for r in json.loads(done.stdout)}
    assert {r["rounds"] for r in runs.values()} == {8, 16}
    for run in runs.values():
        ceilings = [p["first_best_on_second"] for p in run["protocols"]]
        assert all(0.0 < c <= 1.0 for c in ceilings) and run["scenarios"] >= 6
