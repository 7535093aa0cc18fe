"""The store's SQLite connection: a write that finds the database locked by another process
waits for it, however long, instead of failing after SQLite's busy timeout.

A long ``perfport import`` (one transaction, all or nothing) holds the write lock for tens of
seconds; a ``perfport tune`` on the same database used to give up after 30 s, its campaign
failed and its trial lost. Now it says once on stderr why it waits, and goes on when the lock
is free. A statement that failed on the lock did nothing, so running it again is safe; inside a
transaction it is not retried (the caller rolls back), but perfport's transactions begin with
BEGIN IMMEDIATE, which takes the lock first, and WAL readers never wait.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfport._core import StoreError
from perfport._core.interrupts import checkpoint

LOCK_NOTICE_S = 10.0  # SQLite's busy wait per attempt; after the first, say why we wait
RETRY_S = 0.02  # between attempts (a journal-mode switch answers "locked" without waiting)


def _tell(message: str) -> None:
    print(f"perfport: {message}", file=sys.stderr, flush=True)


class WaitingConnection(sqlite3.Connection):
    """``execute`` retries a statement (outside a transaction, or a BEGIN) that found the
    database locked, telling ``notice`` once. Ctrl-C stops the wait, even where interrupts
    are held (``perfport._core.interrupts``): nothing was written meanwhile."""

    path = ""
    notice: Callable[[str], None] = staticmethod(_tell)

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().cursor(*args, **kwargs)
        except sqlite3.ProgrammingError as exc:
            raise _misused(self.path, exc) from None

    @property
    def in_transaction(self) -> bool:
        try:
            return super().in_transaction
        except sqlite3.ProgrammingError as exc:
            raise _misused(self.path, exc) from None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        start, told = time.monotonic(), False
        while True:
            try:
                return super().execute(sql, parameters)
            except sqlite3.ProgrammingError as exc:
                raise _misused(self.path, exc) from None
            except sqlite3.OperationalError as exc:
                begin = sql.lstrip()[:5].upper() == "BEGIN"
                if "database is locked" not in str(exc) or (self.in_transaction and not begin):
                    raise
            if not told and time.monotonic() - start >= LOCK_NOTICE_S:
                told = True
                self.notice(
                    f"{self.path or 'the results database'} is locked by another process (a "
                    "perfport import or tune, or an SQLite session with an open transaction); "
                    "waiting for it (Ctrl-C to stop)"
                )
            checkpoint()
            time.sleep(RETRY_S)


def _misused(path: str, exc: sqlite3.ProgrammingError) -> Exception:
    """A closed Store, or one opened in another thread, as a StoreError naming the fix (the
    raw sqlite3 error says neither which database nor what to do); other errors as they are."""
    where = path or "the results database"
    if "closed database" in str(exc):
        return StoreError(
            f"{where}: this Store is closed; open it again (Store(path)) or use it inside its "
            "'with' block"
        )
    if "same thread" in str(exc):
        return StoreError(
            f"{where}: this Store was opened in another thread and is used only there; open a "
            "Store in each thread (Store(path))"
        )
    return exc


def check_path(path: str, create: bool) -> None:
    """Refuse a --db path that cannot be a database file, naming why: SQLite says only "unable
    to open database file", and a missing file read as "no results database" for a folder."""
    where = Path(path)
    if where.is_dir():
        raise StoreError(
            f"{path} is a folder, not a results database file; give a file path, e.g. "
            f"--db {where / 'perfport.db'}"
        )
    if where.exists() and not where.is_file():
        raise StoreError(
            f"{path} is not a regular file (a FIFO, socket or device); give the path of a "
            "results database file, e.g. --db perfport.db"
        )
    if not where.exists() and not where.absolute().parent.is_dir():
        parent = where.absolute().parent
        fix = f"create it (mkdir -p {parent})" if not parent.exists() else "it is a file"
        raise StoreError(
            f"{path}: its folder {parent} does not exist; {fix}, or give another --db path"
        )
    if not create and not where.is_file():
        raise StoreError(f"no results database at {path}; run 'perfport tune' first or give --db")
    if create and where.is_file() and not os.access(path, os.W_OK):
        # Before SQLite opens it: opened read-only, it leaves a -wal and -shm with the file's
        # mode, which refuse every writer after the file is made writable again.
        raise StoreError(
            f"cannot write {path}: it is read-only to you; make it writable (chmod u+w "
            f"{shlex.quote(path)}) or give another --db path"
        )


def write_protected(path: str) -> bool:
    """Whether ``path`` can be read without SQLite's locks and its -wal and -shm files: no
    write permission for anyone (chmod 444), and no -wal, -shm or -journal beside it, so no
    process has it open. SQLite reading a file it cannot write still creates a -wal and -shm,
    with the file's mode: read-only files that later refused every writer (chmod u+w was not
    enough). A file someone may write is read the usual way, since only SQLite's locks keep a
    reader from seeing a writer's checkpoint half done. A process that may write it anyway
    (root ignores the mode bits) reads it the usual way too: root may also migrate it, and a
    root writer would change it under an immutable reader."""
    try:
        if os.stat(path).st_mode & 0o222 or os.access(path, os.W_OK):
            return False
    except OSError:
        return False
    return not any(os.path.lexists(path + end) for end in ("-wal", "-shm", "-journal"))


def connect(
    path: str, *, shared: bool = False, timeout: float | None = None, frozen: bool = False
) -> sqlite3.Connection:
    """A connection to the results database at ``path`` in autocommit mode (perfport's own
    BEGIN/COMMIT), foreign keys on, every commit synced. ``timeout``: a plain connection that
    fails after this long on a locked database (the lease thread, which must stop promptly),
    instead of a waiting one. ``shared``: used by several threads in turn. ``frozen``: a
    write-protected file (``write_protected``) read as immutable, leaving nothing beside it."""
    conn = sqlite3.connect(
        Path(path).resolve().as_uri() + "?mode=ro&immutable=1" if frozen else path,
        timeout=LOCK_NOTICE_S if timeout is None else timeout,
        isolation_level=None,
        check_same_thread=not shared,
        factory=WaitingConnection if timeout is None else sqlite3.Connection,
        uri=frozen,
    )
    if isinstance(conn, WaitingConnection):
        conn.path = path
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def write_ahead_log(conn: sqlite3.Connection, wait_s: float = 30.0) -> str:
    """Switch to WAL mode, waiting as for any lock: changing the journal mode needs the file to
    itself and SQLite answers "locked" at once, without its busy timeout, while another process
    (e.g. a second writer opening the same new database) reads it. Returns the mode."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
