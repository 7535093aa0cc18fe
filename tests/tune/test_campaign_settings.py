"""Resuming a --campaign key with other measurement settings is refused before anything is
written (it silently mixed results of two strategies, seeds or verifications in one campaign);
limits (budget, time, timeout) may change (user audit item 2)."""

from __future__ import annotations

import sqlite3

import pytest

from perfport import tune
from perfport._core import StoreError
from perfport.measure import RunSettings, Timing

PROBLEM = {"n": 4096}
FAST = RunSettings(timing=Timing(warmup=0, min_repeats=2, max_repeats=2, target_s=0.0))


def _rows(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*), max(updated) FROM campaigns").fetchone()


def test_other_settings_under_one_key_are_refused_limits_may_change(db):
    first = tune("vector_add", problem=PROBLEM, budget=1, db=db, settings=FAST, campaign="k",
                 strategy="brute_force")  # fmt: skip
    assert len(first.measurements) == 1
    before = _rows(db)
    others = {
        "--strategy brute_force, this run has --strategy random": {"strategy": "random"},
        "--seed 0, this run has --seed 5": {
            "strategy": "brute_force", "settings": RunSettings(seed=5, timing=FAST.timing)
        },
        "was run with verification, this run has --no-verify": {
            "strategy": "brute_force", "settings": RunSettings(verify=False, timing=FAST.timing)
        },
        "--repeats 2, this run has adaptive repeats": {
            "strategy": "brute_force", "settings": RunSettings()
        },
    }  # fmt: skip
    for message, change in others.items():
        arguments = {"settings": FAST, **change}
        with pytest.raises(StoreError, match=message) as caught:
            tune("vector_add", problem=PROBLEM, budget=2, db=db, campaign="k", **arguments)
        assert "give a new --campaign key" in str(caught.value)
        assert _rows(db) == before  # nothing written, not even the campaign's status
    # A larger budget, a time limit and another timeout resume the campaign.
    limits = RunSettings(timing=FAST.timing, timeout_s=60.0)
    more = tune("vector_add", problem=PROBLEM, budget=2, db=db, settings=limits, campaign="k",
                strategy="brute_force", confirm_top=0)  # fmt: skip
    assert len(more.measurements) == 2 and more.strategy == "brute_force"
