"""A daemon's campaign of the refusals its clients report (strategy ``reported``) stays
running for good: results called a target that held one unfinished. wg dataset and wg predict
read them as before (the first never, the second as refusals)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfport import Config, Measurement, Outcome, builtin
from perfport.space import PruningReport
from perfport.store import (
    REPORTED,
    CampaignStatus,
    Store,
    best_results,
    complete_results,
    refused_configs,
)

SPEC = builtin("sobel")
REFUSED = Config.of(wc=32, wr=32)


def _campaign(store: Store, cpu: Any, problem: dict[str, int], key: str, strategy: str) -> Any:
    ids = (store.device_id(cpu), store.kernel_id(SPEC),
           store.problem_id(SPEC.problem.merged(problem)))  # fmt: skip
    return store.open_campaign(key, ids, strategy, 0, {}, PruningReport(0, 0, ()), SPEC.describe())


def reported_store(db: Path, cpu: Any) -> Path:
    """Sizes 64: a complete campaign with nothing ok and a client's refusal; 128: a client's
    refusal alone; 256: a campaign still running (not a report) with nothing ok."""
    with Store(db) as store:
        searched = _campaign(store, cpu, {"width": 64, "height": 64}, "searched", "brute_force")
        store.record(searched, Measurement(Config.of(wc=16, wr=16), Outcome.LAUNCH_REFUSED, "no"))
        store.set_status(searched, CampaignStatus.COMPLETE)
        for size in (64, 128):  # as the daemon stores them: never finished
            reported = _campaign(store, cpu, {"width": size, "height": size}, f"r{size}", REPORTED)
            store.record(reported, Measurement(REFUSED, Outcome.LAUNCH_REFUSED, "reported"))
        running = _campaign(store, cpu, {"width": 256, "height": 256}, "running", "brute_force")
        store.record(running, Measurement(Config.of(wc=8, wr=8), Outcome.TIMEOUT, "slow"))
    return db


def test_a_reported_campaign_never_makes_a_target_unfinished(db, cpu):
    with Store(reported_store(db, cpu)) as store:
        found = {r.problem["width"]: r for r in best_results(store)}
    assert found[64].finished and found[128].finished
    assert found[64].campaign_statuses == {"complete": 1, "running": 1}  # as stored
    assert not found[256].finished  # a search still running is still unfinished


def test_wg_dataset_and_predict_read_reported_campaigns_as_before(db, cpu):
    with Store(reported_store(db, cpu)) as store:
        rows = complete_results(store, ["sobel"])  # the complete campaign's alone
        reported = refused_configs(store, cpu.fingerprint, SPEC.source_hash)
        local = refused_configs(store, cpu.fingerprint, SPEC.source_hash, reported=False)
    assert [r.config for r in rows] == [Config.of(wc=16, wr=16)]
    assert reported.count(REFUSED) == 2 and Config.of(wc=16, wr=16) in reported
    assert REFUSED not in local and Config.of(wc=16, wr=16) in local
