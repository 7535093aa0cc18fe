"""A kernel in the store is its source and its name: two specs over one source file (other
parameters, or a renamed spec) keep their own results, name and description. Before schema 10
the kernels table was unique by source hash alone, and the second spec's campaigns were stored
under the first spec's row: its name, its description (default, parameters) and one best over
both specs' configurations."""

import dataclasses
import os
import sqlite3

import pytest

import perfport
from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg
from perfport._core import Config, Measurement, Outcome, StoreError
from perfport.space import kernel_space
from perfport.store import (
    SCHEMA_VERSION,
    ReadOnlyStore,
    Store,
    best_results,
    earlier_failures,
    export_rows,
    one_group,
    schema,
)
from perfport.store.described import kernel_spec

SOURCE = (
    "__kernel void scale(__global float* x, int n) "
    "{ int i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i]; }"
)


def _scale(name, param, values):
    return KernelSpec(
        name=name, source=SOURCE, entry="scale",
        params=(Param(param, values, ParamKind.LAUNCH),), default={param: values[0]},
        global_size=(f"round_up(n, {param})",), local_size=(param,), problem={"n": 4096},
        args=(ArrayArg("x", "float", ("n",), output=True), ScalarArg("n", "int", "n")),
        reference=lambda p, i: {"x": 2 * i["x"]},
    )  # fmt: skip


SMALL = _scale("scale_small", "bx", (16, 32))
BIG = _scale("scale_big", "wg", (64, 128))


def test_two_specs_over_one_source_keep_their_own_results(db):
    perfport.tune(SMALL, strategy="brute_force", db=db)
    perfport.tune(BIG, strategy="brute_force", db=db)
    found = {r.kernel: r for r in perfport.results(db)}
    assert sorted(found) == ["scale_big", "scale_small"]
    for spec, param in ((SMALL, "bx"), (BIG, "wg")):
        r = found[spec.name]
        assert r.campaigns == 1 and r.best is not None and list(r.best) == [param]
        assert r.default == spec.default and r.default_ms is not None and r.speedup is not None
    assert [r.kernel for r in perfport.results(db, kernel="scale_big")] == ["scale_big"]
    with Store(db, create=False) as store:
        rows = list(export_rows(store))
        assert {(r.kernel, *r.config) for r in rows} == {
            ("scale_small", "bx"), ("scale_big", "wg"),
        }  # fmt: skip
        assert len({r.kernel_hash for r in rows}) == 1  # one source
        described = kernel_spec(store, SMALL.source_hash, "scale_big")
        assert described["name"] == "scale_big" and described["default"] == {"wg": 64}
        # By source hash, both kernels match: one_group names them rather than mixing them.
        with pytest.raises(StoreError, match="2 device/kernel/problem combinations match"):
            one_group(store, kernel=SMALL.source_hash[:12])
        assert {tuple(r.config) for r in one_group(store, kernel="scale_big")} == {("wg",)}


def _campaign(store, cpu, spec, key, kernel_id=None):
    problem = spec.problem.merged({})
    ids = (store.device_id(cpu), kernel_id or store.kernel_id(spec), store.problem_id(problem))
    report = kernel_space(spec, problem, cpu).report
    return store.open_campaign(key, ids, "brute_force", 0, {"launch": spec.launch_hash}, report)


def _at_version_9(db, cpu, monkeypatch):
    """A store as perfport wrote it at schema 9: scale_big's campaign under scale_small's row."""
    with monkeypatch.context() as old:
        old.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:9])
        old.setattr(schema, "SCHEMA_VERSION", 9)
        with Store(db) as store:
            store.kernel_id(perfport.builtin("vector_add"))  # so the ids are not all 1
            small = _campaign(store, cpu, SMALL, "scale_small-1")
            big = _campaign(store, cpu, BIG, "scale_big-1", kernel_id=small.kernel_id)
            store.record(small, Measurement(Config.of(bx=16), Outcome.OK, times_ms=(2.0,)))
            store.record(small, Measurement(Config.of(bx=32), Outcome.OK, times_ms=(1.0,)))
            store.record(big, Measurement(Config.of(wg=64), Outcome.OK, times_ms=(3.0,)))
            before = [dataclasses.astuple(r) for r in best_results(store)]
    return small.kernel_id, before


def _rows(db, sql):
    with sqlite3.connect(db) as conn:
        rows = conn.execute(sql).fetchall()
    conn.close()
    return rows


_KEPT = (
    "SELECT * FROM kernels ORDER BY id",
    "SELECT id, kernel_id, key FROM configs ORDER BY id",
    "SELECT id, kernel_id, key FROM campaigns ORDER BY id",
)


def test_a_version_9_store_migrates_keeping_its_rows_and_ids(db, cpu, monkeypatch):
    merged, before = _at_version_9(db, cpu, monkeypatch)
    assert _rows(db, "PRAGMA user_version") == [(9,)]
    kept = [_rows(db, sql) for sql in _KEPT]
    with Store(db) as store:
        assert store.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION >= 10
        assert [_rows(db, sql) for sql in _KEPT] == kept
        assert not store.query("PRAGMA foreign_key_check")
        # The merged row stays as it was: which result was whose is not stored.
        assert [dataclasses.astuple(r) for r in best_results(store)] == before
        # The legacy campaign resumes under its own row; a new one of the name gets a row.
        assert _campaign(store, cpu, BIG, "scale_big-1").kernel_id == merged
        fresh = _campaign(store, cpu, BIG, "scale_big-2")
        assert fresh.kernel_id not in (merged, None)
        store.record(fresh, Measurement(Config.of(wg=128), Outcome.OK, times_ms=(0.5,)))
        assert [r.best for r in best_results(store, kernel="scale_big")] == [Config.of(wg=128)]
    sql = _rows(db, "SELECT sql FROM sqlite_master WHERE name = 'kernels'")[0][0]
    assert "UNIQUE (source_hash, name)" in sql and "source_hash TEXT NOT NULL UNIQUE" not in sql


def test_perfport_before_the_migration_refuses_the_migrated_store_in_one_line(db, cpu, monkeypatch):
    _at_version_9(db, cpu, monkeypatch)
    Store(db).close()
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:9])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 9)
    with pytest.raises(StoreError, match=r"schema version 1\d, newer than this perfport's 9; up"):
        Store(db, create=False)


def test_a_write_protected_version_9_store_is_read_as_it_is(db, cpu, monkeypatch):
    """A chmod 444 store cannot be migrated: at a version this perfport reads (9 differs in a
    constraint only) it is read unmigrated, as the prediction daemon's read-only store is."""
    from perfport.store import connection

    _, before = _at_version_9(db, cpu, monkeypatch)
    content = db.read_bytes()
    db.chmod(0o444)
    monkeypatch.setattr(connection.os, "access", lambda path, mode: not mode & os.W_OK)
    with Store(db, create=False) as store:
        assert store.frozen and store.query("PRAGMA user_version")[0][0] == 9
        assert [dataclasses.astuple(r) for r in best_results(store)] == before
    assert db.read_bytes() == content and sorted(os.listdir(db.parent)) == [db.name]
    with ReadOnlyStore(db) as store:
        assert [dataclasses.astuple(r) for r in best_results(store)] == before
    assert db.read_bytes() == content


def test_failures_are_remembered_across_names_of_one_launch(db, cpu):
    """A renamed spec is a kernel of its own, yet launches the same way: its campaigns reuse
    the crashes of the old name's (the launch hash decides, as before)."""
    renamed = dataclasses.replace(SMALL, name="scale_renamed")
    with Store(db) as store:
        first = _campaign(store, cpu, SMALL, "first")
        store.record(first, Measurement(Config.of(bx=32), Outcome.CRASHED, "worker died"))
        second = _campaign(store, cpu, renamed, "second")
        assert second.kernel_id != first.kernel_id
        assert list(earlier_failures(store, second, 1.0, renamed.launch_hash)) == [Config.of(bx=32)]
