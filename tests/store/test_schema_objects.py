"""A database whose schema was changed by hand: a dropped index is built again, a dropped
table or a wrong version refused in one line before anything is written."""

import sqlite3

import pytest

from perfport._core import StoreError
from perfport.store import Store


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
