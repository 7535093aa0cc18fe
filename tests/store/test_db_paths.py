"""A --db that cannot be a database file is refused naming why, for reading and writing
alike: a folder read as "no results database", a missing folder as SQLite's "unable to open
database file" (user audit item 7)."""

from __future__ import annotations

import os

import pytest

from perfport._core import StoreError
from perfport.store import ReadOnlyStore, Store


@pytest.mark.parametrize("create", [True, False])
def test_a_folder_a_fifo_or_a_missing_folder_is_named(tmp_path, create):
    folder = tmp_path / "dir.db"
    folder.mkdir()
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = {
        folder: f"is a folder, not a results database file; give a file path, e.g. --db {folder}/",
        fifo: "is not a regular file (a FIFO, socket or device)",
        tmp_path / "nope" / "x.db": f"its folder {tmp_path / 'nope'} does not exist; create it",
        afile / "x.db": "does not exist; it is a file, or give another --db path",
    }
    for path, message in cases.items():
        with pytest.raises(StoreError, match=message.replace("(", r"\(").replace(")", r"\)")):
            Store(path, create=create)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "dir.db", "fifo.db"]
    assert list(folder.iterdir()) == []
    with pytest.raises(StoreError, match="is a folder"):
        ReadOnlyStore(folder)


def test_a_database_in_a_read_only_folder_says_so_and_to_copy_it(tmp_path, monkeypatch):
    # As root a folder is never read-only to us, so the folder's answer is stubbed: SQLite
    # fails "unable to open database file" when it cannot create the WAL's -shm beside it.
    import sqlite3

    from perfport.store import integrity

    db = tmp_path / "ro.db"
    db.write_bytes(b"")
    monkeypatch.setattr(integrity.os, "access", lambda path, mode: False)
    error = str(
        integrity.unusable(str(db), sqlite3.OperationalError("unable to open database file"))
    )
    assert f"its folder {tmp_path} is read-only" in error and "copy it to a folder you can" in error


@pytest.mark.parametrize(
    ("writable", "which"),
    [({"folder"}, "it is read-only"), (set(), "its folder")],
)
def test_a_read_only_wal_database_names_the_copy_to_make(tmp_path, monkeypatch, writable, which):
    """A WAL database in a folder the user cannot write failed even for `results` with
    "attempt to write a readonly database; give another --db path", naming no fix. (Stubbed:
    as root nothing is read-only to us; as another user every read-only command says this.)"""
    import sqlite3
    import tempfile

    from perfport.store import integrity

    db = tmp_path / "ro.db"
    db.write_bytes(b"")
    kinds = {str(tmp_path): "folder", str(db): "file"}
    monkeypatch.setattr(integrity.os, "access", lambda path, mode: kinds[str(path)] in writable)
    exc = sqlite3.OperationalError("attempt to write a readonly database")
    error = str(integrity.unusable(str(db), exc))
    copy = os.path.join(tempfile.gettempdir(), "ro.db")
    assert which in error and f"--db {copy}" in error and "\n" not in error
    assert "perfport results" not in error  # any command may get here: a tune named results
    assert f"chmod u+w {copy}" in error  # cp keeps a write-protected file's mode


def _stored(db):
    with Store(db) as store:
        store.query("SELECT 1")
    return db


def test_a_write_protected_database_is_read_leaving_nothing_beside_it(tmp_path, monkeypatch):
    """`results` on a chmod 444 database left a -wal and -shm of mode 444 beside it, which
    refused every writer once the file was writable again. (Stubbed: root may write it.)"""
    import perfport
    from perfport.store import connection

    db = _stored(tmp_path / "ro.db")
    db.chmod(0o444)
    monkeypatch.setattr(connection.os, "access", lambda path, mode: not mode & os.W_OK)
    with Store(db, create=False) as store:
        assert store.frozen and store.query("SELECT count(*) FROM results")[0][0] == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["ro.db"]
    assert perfport.results(db) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro.db"]


def test_a_write_protected_database_that_we_may_write_is_read_the_usual_way(tmp_path, monkeypatch):
    """As root (who ignores the mode bits) a chmod 444 file was read as immutable: an older
    one could not be migrated, and a root writer changed it under the reader."""
    from perfport.store import connection

    db = _stored(tmp_path / "ro.db")
    db.chmod(0o444)
    monkeypatch.setattr(connection.os, "access", lambda path, mode: True)
    assert not connection.write_protected(str(db))


def test_a_read_only_database_is_refused_to_a_writer_before_sqlite_opens_it(tmp_path, monkeypatch):
    """A tune on a file it could not write got as far as SQLite, which left a -wal and -shm
    with the file's mode 444 beside it. (Stubbed: as root every file is writable to us.)"""
    from perfport.store import connection

    db = _stored(tmp_path / "ro.db")
    monkeypatch.setattr(connection.os, "access", lambda path, mode: False)
    with pytest.raises(StoreError, match=f"cannot write {db}: it is read-only to you; make it "):
        Store(db)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro.db"]


@pytest.mark.parametrize("wal_bytes", [b"", b"x"])
def test_a_stale_read_only_shm_is_named_with_when_to_remove_it(tmp_path, monkeypatch, wal_bytes):
    """A -shm left read-only beside a writable database refused tune with advice to copy the
    database and run 'perfport results' on the copy; it names the files and when they can go
    (a -wal that may hold changes is never to be removed)."""
    import sqlite3

    from perfport.store import integrity

    db = tmp_path / "r.db"
    for name, data in (("r.db", b""), ("r.db-shm", b"\0" * 8), ("r.db-wal", wal_bytes)):
        (tmp_path / name).write_bytes(data)
    stale = ("-shm", "-wal") if wal_bytes else ("-shm",)  # a -shm alone is rebuilt: removable
    monkeypatch.setattr(integrity.os, "access", lambda path, mode: not str(path).endswith(stale))
    exc = sqlite3.OperationalError("attempt to write a readonly database")
    error = str(integrity.unusable(str(db), exc))
    assert f"{db}-shm" in error and "read-only to you" in error and "\n" not in error
    if wal_bytes:
        assert "do not remove it" in error and f"chmod u+w {db}-wal {db}-shm" in error
    else:
        assert f"once no perfport or other SQLite program has {db} open, remove it" in error
        assert f"(rm {db}-shm)" in error and "cp " not in error
