"""Many writers of one campaign: claims in the store, one budget, the campaign's best."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perfport import RunSettings, Timing, tune
from perfport._core import Config, Measurement, Outcome
from perfport.devices import get_device
from perfport.kernels import resolve_kernel
from perfport.space import kernel_space
from perfport.store import ClaimState, Store

FAST = RunSettings(timing=Timing.fixed(2))
PROBLEM = {"n": 4096}
# vector_add has 11 work-group sizes, all legal on PoCL: a budget below that is a real limit.
BUDGET = 7


def _campaign(db: Path, key: str = "shared"):
    spec = resolve_kernel("vector_add")
    dev = get_device(None, spec.language)
    with Store(db) as store:
        ids = (store.device_id(dev), store.kernel_id(spec), store.problem_id(spec.problem))
        report = kernel_space(spec, spec.problem, dev).report
        return store.open_campaign(key, ids, "brute_force", 0, {}, report)


def _writers(db: Path, n: int, strategy: str | None) -> list[dict]:
    cmd = [
        sys.executable, "-m", "perfport", "tune", "vector_add", "--problem", "n=1048576",
        "--budget", str(BUDGET), "--repeats", "30", "--campaign", "shared", "--db", str(db),
        "--json", *(["--strategy", strategy] if strategy else []),
        # Each writer re-timing its winners at its end would add samples after another writer
        # reported: the reports are compared with the final store, so no re-timing here.
        "--confirm", "0",
    ]  # fmt: skip
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(n)
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr.decode()
        out.append(json.loads(stdout))
    return out


def _stored(db: Path) -> list[tuple[str, str, float | None]]:
    with Store(db) as store:
        return [
            (r["key"], r["outcome"], r["median_ms"])
            for r in store.query(
                "SELECT c.key, r.outcome, r.median_ms FROM results r "
                "JOIN configs c ON c.id = r.config_id ORDER BY r.id"
            )
        ]


@pytest.mark.parametrize(
    ("writers", "strategy"),
    [
        (2, None),
        # Slow (seconds of processes): random, every writer with the same seed, asks in one
        # fixed order as brute_force does; [3-random] takes the same path in the default suite.
        pytest.param(2, "brute_force", marks=pytest.mark.slow),
        (3, "random"),
    ],
)
def test_concurrent_writers_share_one_budget(tmp_path, writers, strategy):
    db = tmp_path / "shared.db"
    reports = _writers(db, writers, strategy)
    rows = _stored(db)
    assert len(rows) == BUDGET  # exactly the budget, together
    assert len({key for key, _, _ in rows}) == BUDGET
    # Every trial any writer ran is one stored result: nothing was measured twice.
    assert sum(r["measured_this_session"] for r in reports) == BUDGET
    ok = [(median, key) for key, outcome, median in rows if outcome == "ok"]
    best_ms, best_key = min(ok)
    for r in reports:
        assert r["status"] == "budget" and r["measured"] == BUDGET
        assert r["best"]["time_ms"] == best_ms
        assert Config.of(r["best"]["config"]).key == best_key


def test_claims_hold_lapse_and_share_the_budget(db):
    campaign = _campaign(db)
    a, b, c = (Config.of({"wg": w}) for w in (1, 2, 4))
    with Store(db) as store:
        assert store.claim(campaign, a, "A", 60.0, budget=2) is ClaimState.CLAIMED
        assert store.claim(campaign, a, "B", 60.0, budget=2) is ClaimState.HELD
        assert store.claim(campaign, a, "A", 60.0, budget=2) is ClaimState.CLAIMED  # renewed
        assert store.claim(campaign, b, "B", 60.0, budget=2) is ClaimState.CLAIMED
        # Two results-to-be fill a budget of 2: a third configuration must wait.
        assert store.claim(campaign, c, "C", 60.0, budget=2) is ClaimState.BOOKED
        assert store.live_claims(campaign, other_than="A") == {(b.key, "B")}
        store.release_claims(campaign, "B", b)
        assert store.claim(campaign, c, "C", 0.0, budget=2) is ClaimState.CLAIMED
        # C's claim lapsed at once (a dead writer): B takes it over.
        assert store.claim(campaign, c, "B", 60.0, budget=2) is ClaimState.CLAIMED
        store.record(campaign, Measurement(a, Outcome.OK, times_ms=(1.0, 1.0)))
        assert store.claim(campaign, a, "B", 60.0) is ClaimState.STORED
        assert store.live_claims(campaign) == {(c.key, "B")}  # the result ended A's claim
        store.record(campaign, Measurement(c, Outcome.OK, times_ms=(2.0, 2.0)))
        assert store.claim(campaign, b, "A", 60.0, budget=2) is ClaimState.SPENT
        store.renew_claims(campaign, "B", 60.0)
        assert store.live_claims(campaign) == frozenset()


def test_a_dead_writers_claim_comes_back(db):
    """A claim whose writer died (never renewed) blocks its configuration only until it lapses;
    then the next writer measures it, and the budget is still exact."""
    campaign = _campaign(db, "vector_add-dead")
    spec = resolve_kernel("vector_add")
    with Store(db) as store:
        store.claim(campaign, spec.default, "dead:1:x", 1.5)
    started = time.monotonic()
    r = tune(
        "vector_add", problem=spec.problem, budget=4, db=db, settings=FAST,
        strategy="brute_force", campaign="vector_add-dead",
    )  # fmt: skip
    assert time.monotonic() - started >= 1.0  # it waited for the claim on the default
    assert r.status.value == "budget" and len(r.measurements) == 4 and r.measured_here == 4
    assert r.measurements[0].config == spec.default
    with Store(db) as store:
        assert store.live_claims(campaign) == frozenset()


def test_a_killed_writers_claims_come_back_at_once(db):
    """A writer on this host whose process has ended (kill -9) holds nothing: the next
    writer need not wait for the lease to lapse."""
    campaign = _campaign(db, "vector_add-killed")
    spec = resolve_kernel("vector_add")
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    killed = f"{socket.gethostname()}:{ended.pid}:x"
    with Store(db) as store:
        assert store.claim(campaign, spec.default, killed, 600.0) is ClaimState.CLAIMED
        assert store.live_claims(campaign) == frozenset()
        assert store.claim(campaign, spec.default, "next:1:y", 600.0) is ClaimState.CLAIMED
