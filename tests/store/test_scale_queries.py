"""``best_results`` aggregates in SQL: it must name exactly what a plain walk over every stored
row names (best, its time and check, default time, outcome counts, unverified), on stores with
ties, failures after successes and several campaigns of one target."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import Check
from perfport.space import kernel_space
from perfport.store import Store, best_results, export_rows

SPEC = builtin("vector_add")


def _campaign(store: Store, cpu: Any, key: str) -> Any:
    problem = SPEC.problem.merged({"n": 100})
    ids = (store.device_id(cpu), store.kernel_id(SPEC), store.problem_id(problem))
    return store.open_campaign(key, ids, "random", 0, {}, kernel_space(SPEC, problem, cpu).report)


def _reference(rows: list[Any]) -> dict[str, Any]:
    """The definition, row by row in storage order: a configuration with a wrong result
    anywhere is wrong and never the best; else ok if any result is, else its latest outcome."""
    best: dict[str, tuple[float, Any]] = {}
    final: dict[str, str] = {}
    wrong, verified, unverified = set(), set(), set()
    checks: dict[str, list[Check | None]] = {}
    for r in rows:
        key = r.config.key
        if r.outcome is Outcome.WRONG_RESULT:
            wrong.add(key)
        if r.ok and r.median_ms is not None:
            (unverified if r.verification is Check.UNVERIFIED else verified).add(key)
            checks.setdefault(key, []).append(r.verification)
            if key not in best or r.median_ms < best[key][0]:
                best[key] = (r.median_ms, r)
            final[key] = "ok"
        elif final.get(key) != "ok":
            final[key] = r.outcome.value
    for key in wrong:
        final[key] = "wrong_result"
        best.pop(key, None)
    winner = min(best, key=lambda k: best[k][0])  # first-inserted on ties
    # The configuration's strongest check over its ok results, not the fastest one's alone.
    strength = [Check.VERIFIED, Check.REFERENCE, None, Check.UNVERIFIED]
    check = min(checks[winner], key=strength.index)
    return {
        "best": winner, "best_ms": best[winner][0], "check": check,
        "default_ms": best.get(SPEC.default.key if SPEC.default else "", (None,))[0],
        "outcomes": dict(sorted(Counter(final.values()).items())),
        "unverified": len(unverified - verified - wrong),
    }  # fmt: skip


@pytest.mark.parametrize("campaigns", [1, 3])
@pytest.mark.parametrize("seed", [7, 8, 9])
def test_sql_aggregation_matches_a_walk_over_every_row(db, cpu, campaigns, seed):
    rng = random.Random(seed)
    outcomes = [Outcome.OK] * 4 + [Outcome.LAUNCH_REFUSED, Outcome.TIMEOUT, Outcome.WRONG_RESULT]
    with Store(db) as store:
        for c in range(campaigns):  # of one device, kernel and problem
            campaign = _campaign(store, cpu, key=f"c{c}")
            for wg in rng.sample([8, 16, 32, 64, 128, 256, 512, 1024], 7):
                outcome = rng.choice(outcomes)
                times = (float(rng.choice([1, 2, 2, 3])),) if outcome is Outcome.OK else ()
                check = rng.choice([Check.VERIFIED, Check.UNVERIFIED, None])
                store.record(campaign, Measurement(Config.of(wg=wg), outcome, "x", times,
                                                   check=check if times else None))  # fmt: skip
        rows = list(export_rows(store))
        (got,) = best_results(store)
    want = _reference(rows)
    assert got.best is not None and got.best.key == want["best"]
    assert got.best_ms == want["best_ms"] and got.best_verification == want["check"]
    assert got.default_ms == want["default_ms"] and got.unverified == want["unverified"]
    assert {k: v for k, v in got.outcomes.items() if k != "pruned"} == want["outcomes"]
    assert got.campaigns == campaigns


def test_streamed_export_is_what_the_whole_list_would_write(db, cpu):
    import io
    import json

    from perfport.store import export_keys, write_csv, write_json

    with Store(db) as store:
        campaign = _campaign(store, cpu, key="c0")
        for wg in (8, 64, 256):
            store.record(campaign, Measurement(Config.of(wg=wg), Outcome.OK, "", (1.0, 2.0)))
        rows = list(export_rows(store))
        keys = export_keys(store)
        assert keys == (
            ["dtype", "n"],
            ["wg"],
            ["GBps", "GFLOPs", "roofline", "roofline_same_bytes"],
        )
        assert export_keys(store, kernel="nothing") == ([], [], [])
        streamed, whole, csv_streamed, csv_whole = (io.StringIO() for _ in range(4))
        assert write_json(export_rows(store), streamed) == 3
        write_csv(export_rows(store), csv_streamed, *keys)
    json.dump([r.to_json() for r in rows], whole, indent=1)
    assert streamed.getvalue() == whole.getvalue() + "\n"
    write_csv(rows, csv_whole)
    assert csv_streamed.getvalue() == csv_whole.getvalue()
    empty = io.StringIO()
    assert write_json([], empty) == 0 and json.loads(empty.getvalue()) == []


def test_a_wrong_result_outweighs_an_unverified_ok_in_every_reader(db, cpu):
    """A --no-verify campaign's ok made a configuration that failed verification the best of
    results, replay and kt-cache export."""
    from perfport.store import one_group

    with Store(db) as store:
        verified, unverified = _campaign(store, cpu, "v"), _campaign(store, cpu, "u")
        for wg, outcome in ((8, Outcome.WRONG_RESULT), (16, Outcome.OK)):
            times = (1.0,) if outcome is Outcome.OK else ()
            store.record(verified, Measurement(Config.of(wg=wg), outcome, "", times,
                                               check=Check.VERIFIED if times else None))  # fmt: skip
        for wg, ms in ((8, 0.5), (16, 1.0)):
            store.record(unverified, Measurement(Config.of(wg=wg), Outcome.OK, "", (ms,),
                                                 check=Check.UNVERIFIED))  # fmt: skip
        (best,) = best_results(store)
        rows = {r.config["wg"]: r.outcome for r in one_group(store)}
    assert best.best == Config.of(wg=16) and best.outcomes["wrong_result"] == 1
    assert best.unverified == 0  # wg=16 has a verified result too
    assert rows == {8: Outcome.WRONG_RESULT, 16: Outcome.OK}


def test_a_best_verified_by_another_campaign_is_verified(db, cpu):
    """The best's fastest time came from a --no-verify campaign and another campaign verified
    it: results --json said verified false, verification unverified, and unverified 0."""
    with Store(db) as store:
        verified, unverified = _campaign(store, cpu, "v"), _campaign(store, cpu, "u")
        for campaign, ms, check in (
            (verified, 2.0, Check.VERIFIED),
            (unverified, 1.0, Check.UNVERIFIED),
        ):
            store.record(campaign, Measurement(Config.of(wg=16), Outcome.OK, "", (ms,), check=check,
                                               verified_against="numpy reference"
                                               if check is Check.VERIFIED else None))  # fmt: skip
        store.record(unverified, Measurement(Config.of(wg=8), Outcome.OK, "", (3.0,),
                                             check=Check.UNVERIFIED))  # fmt: skip
        (best,) = best_results(store)
    shown = best.to_json()
    assert best.best == Config.of(wg=16) and best.best_ms == 1.0  # the fastest time still
    assert (shown["verified"], shown["verification"]) == (True, "verified")
    assert shown["verified_against"] == "numpy reference"
    assert shown["unverified"] == 1  # wg=8 alone: never verified anywhere


def test_two_sources_under_one_name_are_told_apart_by_their_hash(db, cpu):
    """Two kernels named alike could not be exported one at a time: the error named neither."""
    import dataclasses

    from perfport._core import StoreError
    from perfport.store import one_group

    other = dataclasses.replace(SPEC, source=SPEC.source + "\n// another version\n")
    with Store(db) as store:
        for spec in (SPEC, other):
            ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(spec.problem))
            campaign = store.open_campaign(spec.source_hash[:8], ids, "random", 0, {},
                                           kernel_space(spec, spec.problem, cpu).report)  # fmt: skip
            store.record(campaign, Measurement(Config.of(wg=8), Outcome.OK, "", (1.0,)))
        with pytest.raises(StoreError, match=f"--kernel {other.source_hash[:12]}"):
            one_group(store)
        assert len(one_group(store, kernel=other.source_hash[:12])) == 1


def test_two_devices_under_one_name_are_told_apart_by_their_fingerprint(db, cpu):
    """An H100's OpenCL and CUDA devices share a name: the error listed one line for both
    and named nothing that tells them apart."""
    import dataclasses

    from perfport._core import StoreError
    from perfport.store import one_group

    twin = dataclasses.replace(cpu, id="cuda:0", driver=cpu.driver + " (another)")
    with Store(db) as store:
        for device in (cpu, twin):
            ids = (store.device_id(device), store.kernel_id(SPEC), store.problem_id(SPEC.problem))
            campaign = store.open_campaign(device.fingerprint, ids, "random", 0, {},
                                           kernel_space(SPEC, SPEC.problem, cpu).report)  # fmt: skip
            store.record(campaign, Measurement(Config.of(wg=8), Outcome.OK, "", (1.0,)))
        with pytest.raises(StoreError) as error:
            one_group(store)
        assert f"--device {twin.fingerprint}" in str(error.value)
        assert f"--device {cpu.fingerprint}" in str(error.value)
        assert "{" not in str(error.value)  # the problem as k=v, not a dict
        assert len(one_group(store, device=twin.fingerprint)) == 1
