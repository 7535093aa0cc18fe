"""The value check on opening reads only rows not yet known good (store/integrity.py), yet a
row changed or slipped in below the marks by any SQLite client is still refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import StoreError
from perfport.space import kernel_space
from perfport.store import Store
from perfport.store.schema import MIGRATIONS, _incremental_check, _statements


def _stored(db: Path, cpu, n: int = 5) -> None:
    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 100})
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(problem))
        report = kernel_space(spec, problem, cpu).report
        campaign = store.open_campaign("c", ids, "random", 0, {}, report)
        store.record_many(
            campaign,
            [Measurement(Config.of(wg=2**i), Outcome.OK, times_ms=(1.0, 2.0)) for i in range(n)],
        )


def _sql(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def _marks(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT key, CAST(value AS INTEGER) FROM meta").fetchall()
    conn.close()
    return {k: v for k, v in rows if k.startswith("checked:")}


def test_perfports_own_results_move_the_marks(db, cpu):
    _stored(db, cpu)
    assert _marks(db) == {"checked:results": 5, "checked:samples": 5, "checked:configs": 5}


@pytest.mark.parametrize(
    "edit",
    [
        ("UPDATE results SET outcome = 'bogus' WHERE id = 1",),
        ("UPDATE samples SET times = x'0102' WHERE rowid = 2",),
        ("UPDATE configs SET key = '5' WHERE id = 3",),
        # a row put back below the mark, by an explicit rowid: the insert trigger lists it
        ("DELETE FROM samples WHERE rowid = 4",
         "INSERT INTO samples (result_id, times) VALUES (4, 'text')"),
    ],
)  # fmt: skip
def test_a_row_edited_below_the_mark_is_refused_and_never_written(db, cpu, edit):
    _stored(db, cpu)
    _sql(db, *edit)
    before = db.read_bytes()
    with pytest.raises(StoreError, match="changed outside perfport"):
        Store(db, create=False)
    with pytest.raises(StoreError, match="changed outside perfport"):
        _stored(db, cpu, 6)  # a writer is refused too
    assert db.read_bytes() == before


def test_a_row_stored_above_the_mark_by_another_client_is_refused(db, cpu):
    _stored(db, cpu)
    _sql(db, "INSERT INTO results SELECT id + 10, campaign_id + 1, config_id, 'weird', message, "
             "n, min_ms, median_ms, mean_ms, std_ms, ci_low_ms, ci_high_ms, compile_ms, "
             "tool_version, created, verification, verified_against FROM results WHERE id = 1")  # fmt: skip
    with pytest.raises(StoreError, match="results row 11"):
        Store(db, create=False)


def test_without_the_triggers_only_the_full_check_finds_an_old_row(db, cpu):
    """What opening skips: rows below the marks that no trigger listed (a change below SQLite,
    made here by clearing the list). check_everything still reads them."""
    _stored(db, cpu)
    _sql(db, "UPDATE results SET n = 'x' WHERE id = 2", "DELETE FROM unchecked")  # unlisted
    with Store(db, create=False) as store, pytest.raises(StoreError, match="results row 2"):
        store.check_everything()


def test_a_dropped_trigger_is_made_again_and_every_row_checked(db, cpu):
    """A row changed while its trigger was dropped was never listed: opening found nothing."""
    _stored(db, cpu)
    _sql(db, "DROP TRIGGER results_changed", "UPDATE results SET n = 'x' WHERE id = 2")
    with pytest.raises(StoreError, match="results row 2"):
        Store(db, create=False)
    _sql(db, "UPDATE results SET n = 3 WHERE id = 2")
    with Store(db, create=False):
        pass
    assert "results_changed" in {
        name for (name,) in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")
    }


def test_the_migration_checks_every_row_once_and_refuses_a_bad_one(tmp_path, cpu):
    db = tmp_path / "v7.db"
    _stored(db, cpu)
    # Back to version 7: drop what migration 8 and those after it made, then damage an old row.
    _sql(db, "DROP TABLE unchecked", *(f"DROP TRIGGER {t}_{w}" for t in ("results", "samples",
         "configs") for w in ("changed", "below_mark")), "DELETE FROM meta",
         "ALTER TABLE ceilings DROP COLUMN copy_curve", "DROP TABLE campaign_specs",
         f"PRAGMA user_version = {MIGRATIONS.index(_incremental_check)}")  # fmt: skip
    _sql(db, "UPDATE results SET median_ms = 'abc' WHERE id = 3")
    before = db.read_bytes()
    with pytest.raises(StoreError, match="results row 3"):
        Store(db, create=False)
    assert db.read_bytes() == before
    _sql(db, "UPDATE results SET median_ms = 2.0 WHERE id = 3")
    with Store(db, create=False):
        pass
    assert _marks(db)["checked:results"] == 5


def test_an_old_database_gains_the_marks(tmp_path):
    db = tmp_path / "v1.db"
    conn = sqlite3.connect(db)
    for statement in _statements(str(MIGRATIONS[0])):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store(db):
        pass
    assert _marks(db) == {"checked:results": 0, "checked:samples": 0, "checked:configs": 0}


@pytest.mark.parametrize(
    ("edit", "table", "row"),
    [
        ("UPDATE configs SET key = '5' WHERE id = 3", "configs", 3),
        ("UPDATE samples SET times = x'0102' WHERE rowid = 2", "samples", 2),
        ("UPDATE results SET outcome = 'bogus' WHERE id = 4", "results", 4),
    ],
)
def test_the_advised_delete_leaves_no_row_without_what_it_depends_on(db, cpu, edit, table, row):
    # Deleting the damaged row alone left results without their configuration (missing from
    # export, yet counted in the budget) or without their samples (n 2, no times).
    _stored(db, cpu)
    _sql(db, edit)
    with pytest.raises(StoreError, match=f"{table} row {row}") as caught:
        Store(db, create=False)
    advice = str(caught.value).split('"')[1]
    assert advice.startswith("DELETE FROM")
    conn = sqlite3.connect(db)
    conn.executescript(advice)  # as `sqlite3 DB "..."` runs it: foreign keys off
    orphans = conn.execute(
        "SELECT (SELECT count(*) FROM results WHERE config_id NOT IN (SELECT id FROM configs)"
        " OR campaign_id NOT IN (SELECT id FROM campaigns)),"
        " (SELECT count(*) FROM samples WHERE result_id NOT IN (SELECT id FROM results)),"
        " (SELECT count(*) FROM results WHERE n > 0 AND id NOT IN (SELECT result_id FROM samples))"
    ).fetchone()
    left = conn.execute("SELECT count(*) FROM results").fetchone()[0]
    conn.close()
    assert orphans == (0, 0, 0) and left == 4
    with Store(db, create=False) as store:  # usable again
        assert len(store.measurements(store.campaign("c"))) == 4


def test_the_full_check_names_orphans_with_one_command_that_removes_them(db, cpu):
    _stored(db, cpu)
    _sql(db, "DELETE FROM configs WHERE id = 3")  # the old advice: its result stays
    orphan = "results row 3 lacks a row it depends on"
    with Store(db) as store, pytest.raises(StoreError, match=orphan) as caught:
        store.check_everything()
    conn = sqlite3.connect(db)
    conn.executescript(str(caught.value).split('"')[1])
    conn.close()
    with Store(db) as store:
        store.check_everything()
        assert len(store.measurements(store.campaign("c"))) == 4
