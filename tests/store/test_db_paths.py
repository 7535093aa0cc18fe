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
    [({"folder"}, "it is read-only"), (set(), "its folder"), ({"folder", "file"}, "its -wal")],
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
    assert which in error and f"perfport results --db {copy}" in error and "\n" not in error
