"""A database whose schema was changed by hand: a dropped index is built again, a dropped
table or a wrong version refused in one line before anything is written."""

import sqlite3

import pytest

from perfport._core import StoreError
from perfport.store import SCHEMA_VERSION, Store


def _tamper(path, statement):
    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    conn.close()


def _objects(path):
    with sqlite3.connect(path) as conn:
        found = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    return found


def test_a_dropped_index_is_built_again(tmp_path):
    db = tmp_path / "r.db"
    Store(db).close()
    _tamper(db, "DROP INDEX results_by_config")
    assert "results_by_config" not in _objects(db)
    Store(db).close()
    assert "results_by_config" in _objects(db)


@pytest.mark.parametrize(
    ("statement", "says"),
    [
        ("DROP TABLE claims", "has no table 'claims': it was changed by hand or is damaged"),
        ("PRAGMA user_version = 8", "says schema version 8 but its tables are not that version's"),
    ],
)
def test_a_tampered_schema_is_refused_before_any_write(tmp_path, statement, says):
    """A tune on a store without its claims table wrote its campaign, then failed on the
    first claim; a wrong version failed on a 'duplicate column' that named nothing."""
    db = tmp_path / "r.db"
    Store(db).close()
    _tamper(db, statement)
    before = db.read_bytes()
    with pytest.raises(StoreError, match=says) as refused:
        Store(db)
    assert "give another --db path" in str(refused.value)
    assert db.read_bytes() == before


@pytest.mark.parametrize("version", [1, 3, 6, SCHEMA_VERSION, SCHEMA_VERSION + 1])
@pytest.mark.parametrize("create", [True, False])
def test_another_programs_database_is_refused_untouched(tmp_path, version, create):
    """A read-only `results` on an app's database with user_version 3 added split_plans,
    ceilings and calibrations and set the version to 6 before failing: the "not a perfport
    database" check ran at version 0 alone, and each migration step committed on its own."""
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('important')")
        conn.execute(f"PRAGMA user_version = {version}")
    conn.close()
    before = db.read_bytes()
    with pytest.raises(StoreError, match="is an SQLite database but not a perfport one"):
        Store(db, create=create)
    assert db.read_bytes() == before
    assert _objects(db) == {"notes"}


def test_a_failing_step_leaves_the_file_as_it_was(tmp_path):
    """Steps after the first that fail roll the earlier ones back, and the error names the
    version the file had: it named the version the committed steps had reached."""
    db = tmp_path / "r.db"
    Store(db).close()
    # Version 3 but for a table of version 5: step 3 -> 4 works, step 4 -> 5 fails.
    _tamper(db, "DROP TABLE split_plans")
    _tamper(db, "PRAGMA user_version = 3")
    before = db.read_bytes()
    with pytest.raises(StoreError, match="says schema version 3 but its tables are not that"):
        Store(db, create=False)
    assert db.read_bytes() == before
    assert "split_plans" not in _objects(db)
