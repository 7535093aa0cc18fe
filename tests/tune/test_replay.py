import json
import subprocess
import sys

from perfport import RunSettings, Timing, tune
from perfport.tune.replay import replay_db


def test_replay_stored_campaign(db):
    tune(
        "convolution",
        problem={"n": 4096, "mask": 5},
        strategy="brute_force",
        db=db,
        settings=RunSettings(timing=Timing.fixed(2)),
    )
    result = replay_db(db, "convolution", None, "random", budget=11, repeats=4)
    assert result.mean_best_fraction == 1.0  # 11 of 11 configurations: the optimum is always found
    assert len(result.curve) == 11 and result.curve[0] <= result.curve[-1]
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "replay", "--db", str(db), "--budget", "5", "--repeats", "3", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {
        "strategy",
        "budget",
        "repeats",
        "mean_best_fraction",
        "median_evals_to_95",
        "curve",
    } <= set(out)
    assert out["budget"] == 5 and out["repeats"] == 3 and len(out["curve"]) == 5
