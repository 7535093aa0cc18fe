"""Databases that are damaged, hold values perfport never wrote, or sit on a full disk: each
command ends in one line and exit 2, and the file is left exactly as it was."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from perfport.cli import main
from perfport.store import Store

_connect = sqlite3.connect  # the real one: the full-disk fixture patches the module's


@pytest.fixture(scope="module")
def good_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("db") / "good.db"
    assert main(["tune", "vector_add", "--problem", "n=4096", "--budget", "4", "--repeats", "2",
                 "--db", str(db), "--json"]) == 0  # fmt: skip
    with sqlite3.connect(db) as conn:  # fold the WAL in, so the file alone is the database
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


def _damaged(good: Path, tmp: Path, table: str) -> Path:
    db = tmp / "damaged.db"
    shutil.copy(good, db)
    with sqlite3.connect(db) as conn:
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with db.open("r+b") as f:  # overwrite the cell pointers of the table's first page
        f.seek((root - 1) * page + 8)
        f.write(b"\xff" * 64)
    return db


# perfport tune's progress lines (stderr not a terminal): the campaign's, not the error's.
PROGRESS = re.compile(r"^.+: \d+/\d+ best .*\n", re.M)


def _one_line_error(capsys, code: int, *words: str) -> str:
    err = PROGRESS.sub("", capsys.readouterr().err)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("perfport"), err
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize(
    "command",
    [["results"], ["results", "--json"], ["export"], ["export", "--format", "t4"],
     ["tune", "vector_add", "--problem", "n=4096", "--budget", "6", "--repeats", "2"]],
)  # fmt: skip
def test_a_damaged_page_is_one_line_and_never_written(good_db, tmp_path, capsys, command):
    db = _damaged(good_db, tmp_path, "results")
    before = db.read_bytes()
    code = main([*command, "--db", str(db)])
    _one_line_error(capsys, code, "damaged", ".recover")
    assert db.read_bytes() == before
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE results SET outcome = 'bogus' WHERE id = 2",
        "UPDATE results SET median_ms = 'abc' WHERE id = 2",
        "UPDATE results SET median_ms = -1 WHERE id = 2",  # shown as -1 ms and -0.38x before
        "UPDATE configs SET key = 'not json' WHERE id = 2",
        "UPDATE configs SET key = '5' WHERE id = 1",
        "UPDATE samples SET times = x'0102' WHERE rowid = 1",
        "UPDATE kernels SET spec = '['",
        "UPDATE problems SET key = 'zz'",
        "UPDATE campaigns SET status = 'weird'",
        "UPDATE campaigns SET seed = 'x'",
    ],
)
@pytest.mark.parametrize(
    "command",
    [["results"], ["export"], ["export", "--format", "kt-cache"],
     ["tune", "vector_add", "--problem", "n=4096", "--budget", "6", "--repeats", "2"]],
)  # fmt: skip
def test_invalid_values_are_one_line_and_never_written(good_db, tmp_path, capsys, change, command):
    db = tmp_path / "edited.db"
    shutil.copy(good_db, db)
    with sqlite3.connect(db) as conn:
        conn.execute(change)
    conn.close()
    before = db.read_bytes()
    code = main([*command, "--db", str(db)])
    _one_line_error(capsys, code, "row", "outside perfport")
    assert db.read_bytes() == before


class _FullDisk:
    """A connection whose inserts of results fail as on a full disk after ``room`` of them."""

    def __init__(self, conn: sqlite3.Connection, room: int) -> None:
        self._conn, self._room = conn, room

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.lstrip().upper().startswith("INSERT OR IGNORE INTO RESULTS"):
            if self._room <= 0:
                raise sqlite3.OperationalError("database or disk is full")
            self._room -= 1
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


@pytest.fixture
def full_disk(monkeypatch):
    """Patch sqlite3.connect as the store sees it: each store gets room for ``room`` results."""
    import perfport.store.store as store_module

    real = sqlite3.connect

    def connect(room: int) -> None:
        monkeypatch.setattr(
            store_module.sqlite3, "connect", lambda *a, **k: _FullDisk(real(*a, **k), room)
        )

    yield connect
    monkeypatch.setattr(store_module.sqlite3, "connect", real)


def test_a_full_disk_during_tune_keeps_what_was_committed(tmp_path, capsys, full_disk):
    db = tmp_path / "full.db"
    full_disk(2)
    code = main(["tune", "vector_add", "--problem", "n=4096", "--budget", "6", "--repeats", "2",
                 "--db", str(db)])  # fmt: skip
    _one_line_error(capsys, code, "disk is full", "resume")
    with _connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 2
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


_TABLES = ("devices", "kernels", "problems", "campaigns", "configs", "results", "samples")


def _rows(db: Path) -> dict[str, int]:
    with _connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _TABLES}
    conn.close()
    return counts


@pytest.mark.parametrize("room", [0, 2])
def test_a_full_disk_during_import_imports_nothing(good_db, tmp_path, capsys, full_disk, room):
    """All or nothing: no campaign, device, kernel or problem row is left of a failed import,
    in a new store or in one holding a campaign (which stays byte for byte)."""
    from perfport.store.formats.kt_cache import to_kt_cache

    with Store(good_db, create=False) as store:
        cache = to_kt_cache(store)
    path = tmp_path / "cache.json"
    path.write_text(__import__("json").dumps(cache))
    assert len(cache["cache"]) > room
    fresh, existing = tmp_path / "full.db", tmp_path / "existing.db"
    shutil.copy(good_db, existing)
    before, counts = existing.read_bytes(), _rows(existing)
    full_disk(room)
    _one_line_error(capsys, main(["import", str(path), "--db", str(fresh)]), "disk is full")
    _one_line_error(capsys, main(["import", str(path), "--db", str(existing)]), "disk is full")
    assert set(_rows(fresh).values()) == {0}
    assert _rows(existing) == counts
    with _connect(existing) as conn:  # fold in whatever the WAL holds: nothing committed
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert existing.read_bytes() == before


@pytest.mark.parametrize("flag", ["--seed", "--budget", "--build-jobs", "--repeats"])
def test_integers_beyond_64_bits_are_refused_before_the_store(tmp_path, capsys, flag):
    db = tmp_path / "none.db"
    with pytest.raises(SystemExit) as info:
        main(["tune", "vector_add", flag, "1" * 30, "--db", str(db)])
    assert info.value.code == 2 and "64-bit" in capsys.readouterr().err
    assert not db.exists()
