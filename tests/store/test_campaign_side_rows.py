"""The rows keyed by a campaign's id besides its results (its description, schema 11, and its
claims): perfport's advice for a damaged campaign deletes them with it, the full check finds
them left behind, and a new campaign given a freed id never takes them for its own. Left
behind, the kt-cache export of an imported campaign wrote another kernel's name and
parameters, and lost a result (tx not among saxpy's wg and ITEMS)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import StoreError
from perfport.space import kernel_space
from perfport.store import Store
from perfport.store.described import campaign_specs
from perfport.store.integrity import delete_row
from perfport.store.schema import SCHEMA_VERSION, _blueprint


def _campaign(store: Store, cpu, kernel: str, key: str, spec: bool) -> None:
    kernel_spec = builtin(kernel)
    problem = kernel_spec.problem
    ids = (store.device_id(cpu), store.kernel_id(kernel_spec), store.problem_id(problem))
    report = kernel_space(kernel_spec, problem, cpu).report
    described = kernel_spec.describe() if spec else None
    campaign = store.open_campaign(key, ids, "random", 0, {}, report, described)
    config = Config.of(**kernel_spec.default)
    store.record(campaign, Measurement(config, Outcome.OK, times_ms=(1.0,)))


def _sql(db: Path, script: str) -> None:
    conn = sqlite3.connect(db)
    conn.executescript(script)  # as `sqlite3 DB "..."` runs it: foreign keys off
    conn.close()


def _count(db: Path, sql: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_every_table_keyed_by_a_campaign_is_in_the_advised_delete():
    conn = sqlite3.connect(":memory:")
    keyed = []
    for name, (kind, sql) in _blueprint(SCHEMA_VERSION).items():
        conn.execute(sql)
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
        if kind == "table" and "campaign_id" in columns:
            keyed.append(name)
    conn.close()
    advice = delete_row("campaigns", 1)
    assert {"results", "claims", "campaign_specs"} <= set(keyed)
    assert all(f"DELETE FROM {table} WHERE campaign_id IN" in advice for table in keyed)


def test_the_advised_delete_of_a_damaged_campaign_leaves_no_description(db, cpu):
    with Store(db) as store:
        _campaign(store, cpu, "vector_add", "c", spec=True)
    _sql(db, "UPDATE campaigns SET status = 'bogus' WHERE id = 1")
    with pytest.raises(StoreError, match="campaigns row 1") as caught:
        Store(db, create=False)
    _sql(db, str(caught.value).split('"')[1])
    assert _count(db, "SELECT count(*) FROM campaign_specs") == 0
    with Store(db) as store:
        store.check_everything()


def test_the_full_check_finds_a_description_left_behind(db, cpu):
    with Store(db) as store:
        _campaign(store, cpu, "vector_add", "c", spec=True)
    # The advice before schema 11's table was in it: the campaign and its results alone.
    _sql(db, "DELETE FROM samples; DELETE FROM results; DELETE FROM campaigns;")
    with Store(db) as store, pytest.raises(StoreError, match="campaign_specs row 1 lacks") as c:
        store.check_everything()
    _sql(db, str(c.value).split('"')[1])
    assert _count(db, "SELECT count(*) FROM campaign_specs") == 0
    with Store(db) as store:
        store.check_everything()


def test_a_new_campaign_never_takes_the_rows_left_under_its_id(db, cpu):
    with Store(db) as store:
        _campaign(store, cpu, "vector_add", "old", spec=True)
        later = time.time() + 3600
        _sql(db, f"INSERT INTO claims VALUES (1, 1, 'host:1:x', {later})")
    _sql(db, "DELETE FROM samples; DELETE FROM results; DELETE FROM campaigns;")
    with Store(db) as store:
        _campaign(store, cpu, "matmul", "new", spec=False)  # imported: no description of its own
        assert store.campaign("new").id == 1  # the freed id
        (spec,) = campaign_specs(store, ["new"])
        assert spec["name"] == "matmul"  # its kernel's, not vector_add's
        assert _count(db, "SELECT count(*) FROM claims") == 0
        store.check_everything()
