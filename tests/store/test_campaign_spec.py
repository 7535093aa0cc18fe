"""Each campaign keeps the description it ran with (schema 11). A spec edited under the same
source and name (another default, other parameter values) is the same kernel, whose row keeps
the description stored first: results showed the first default (no time, no speedup) for a
campaign that measured its own default first, the report said the default had no ok result,
and the kt-cache export wrote the first spec's tune_params beside keys of the new values."""

import dataclasses
import json
import os
import sqlite3

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg
from perfport._core import Config, Measurement, Outcome, Problem
from perfport.report.data import gather
from perfport.space import PruningReport
from perfport.store import SCHEMA_VERSION, ReadOnlyStore, Store, best_results
from perfport.store.described import campaign_specs, declared_params
from perfport.store.formats.kt_cache import to_kt_cache

SOURCE = (
    "__kernel void scale(__global float* x, int n) "
    "{ int i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i]; }"
)
FIRST = KernelSpec(
    name="scale", source=SOURCE, entry="scale",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),), default={"wg": 64},
    global_size=("round_up(n, wg)",), local_size=("wg",), problem={"n": 4096},
    args=(ArrayArg("x", "float", ("n",), output=True), ScalarArg("n", "int", "n")),
)  # fmt: skip
# The same source and name: another default and more values
EDITED = dataclasses.replace(
    FIRST, params=(Param("wg", (16, 32, 64, 128, 256), ParamKind.LAUNCH),), default={"wg": 128}
)


def _campaign(store, cpu, spec, key, n, times):
    problem = Problem.of({"n": n})
    ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(problem))
    campaign = store.open_campaign(
        key, ids, "brute_force", 0, {}, PruningReport(0, 0, ()), spec.describe()
    )
    for wg, ms in times.items():
        store.record(campaign, Measurement(Config.of(wg=wg), Outcome.OK, times_ms=(ms,)))
    return campaign


def _fill(db, cpu):
    with Store(db) as store:
        _campaign(store, cpu, FIRST, "first", 4096, {64: 2.0, 32: 1.0})
        _campaign(store, cpu, EDITED, "edited", 8192, {128: 4.0, 256: 1.0})
        assert store.kernel_id(FIRST) == store.kernel_id(EDITED)  # one kernel row


def test_results_and_report_use_each_campaigns_own_default(db, cpu):
    _fill(db, cpu)
    with Store(db) as store:
        by_n = {r.problem["n"]: r for r in best_results(store)}
        assert by_n[8192].default == Config.of(wg=128) and by_n[8192].default_ms == 4.0
        assert by_n[8192].speedup == 4.0
        assert by_n[4096].default == Config.of(wg=64) and by_n[4096].speedup == 2.0
        views = {v.key: v for v in gather(store).campaigns}
    assert views["edited"].default == Config.of(wg=128) and views["edited"].default_ms == 4.0
    assert views["first"].default == Config.of(wg=64) and views["first"].default_ms == 2.0


def test_kt_cache_export_declares_the_values_its_campaigns_ran_with(db, cpu):
    _fill(db, cpu)
    with Store(db) as store:
        cache = to_kt_cache(store, problem={"n": 8192})
        assert cache["tune_params"] == {"wg": [16, 32, 64, 128, 256]}
        assert set(cache["cache"]) == {"128", "256"}
        assert to_kt_cache(store, problem={"n": 4096})["tune_params"] == {"wg": [16, 32, 64]}
        # over both campaigns: every value either declared
        both = declared_params(store, FIRST.source_hash, "scale", {"first", "edited"})
        assert both == {"wg": [16, 32, 64, 128, 256]}


def test_a_resumed_campaign_keeps_the_description_it_last_ran_with(db, cpu):
    with Store(db) as store:
        _campaign(store, cpu, FIRST, "one", 4096, {})
        described = dataclasses.replace(FIRST, metrics={"rate": "n / time_ms"})
        _campaign(store, cpu, described, "one", 4096, {64: 1.0})
        (spec,) = campaign_specs(store, ["one"])
        assert spec["metrics"] == described.describe()["metrics"]


def _at_version_10(db, cpu):
    """The store as schema 10 had it: no descriptions of campaigns (dropped, as the migration
    to 11 had never run)."""
    _fill(db, cpu)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE campaign_specs")
        conn.execute("PRAGMA user_version = 10")
    conn.close()


def test_a_version_10_store_migrates_and_reads_its_kernels_description(db, cpu):
    _at_version_10(db, cpu)
    with Store(db) as store:
        assert store.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION == 11
        assert campaign_specs(store, ["edited"])[0]["default"] == {"wg": 64}  # the kernel's
        assert {r.problem["n"]: r.default for r in best_results(store)}[8192] == Config.of(wg=64)


def test_a_write_protected_version_10_store_is_read_as_it_is(db, cpu, monkeypatch):
    from perfport.store import connection

    _at_version_10(db, cpu)
    content = db.read_bytes()
    db.chmod(0o444)
    monkeypatch.setattr(connection.os, "access", lambda path, mode: not mode & os.W_OK)
    with Store(db, create=False) as store:
        assert store.frozen and store.query("PRAGMA user_version")[0][0] == 10
        assert len(best_results(store)) == 2
        assert json.loads(json.dumps(to_kt_cache(store, problem={"n": 8192})))["cache"]
        with store.twin() as twin:
            assert len(best_results(twin)) == 2
    assert db.read_bytes() == content and sorted(os.listdir(db.parent)) == [db.name]
    with ReadOnlyStore(db) as store:
        assert len(best_results(store)) == 2
    assert db.read_bytes() == content


def test_tune_stores_the_description_each_campaign_ran_with(db, cpu):
    from perfport import RunSettings, Timing, tune

    fast = RunSettings(timing=Timing.fixed(1), verify=False)
    first = tune(FIRST, device=cpu.id, db=db, settings=fast, budget=1, strategy="brute_force")
    edited = tune(EDITED, device=cpu.id, db=db, settings=fast, budget=1, strategy="brute_force")
    with Store(db) as store:
        assert campaign_specs(store, [first.campaign])[0]["default"] == {"wg": 64}
        assert campaign_specs(store, [edited.campaign])[0]["default"] == {"wg": 128}
        (target,) = best_results(store)  # one kernel, device and problem: the newest's default
        assert target.default == Config.of(wg=128) and target.default_ms is not None
