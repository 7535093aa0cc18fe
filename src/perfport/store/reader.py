"""Read-only access to a results database, for a process that must never wait on a writer
(the prediction daemon): no schema migration, no write lock, and in WAL mode a read never
waits for a writer's transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from perfport._core import StoreError
from perfport.store.connection import check_path
from perfport.store.integrity import unusable
from perfport.store.schema import READABLE_FROM, SCHEMA_VERSION, read_as_current
from perfport.store.store import Store

_REPORTED = (
    "SELECT count(*) FROM results r JOIN campaigns g ON g.id = r.campaign_id WHERE g.strategy = ?"
)


class ReadOnlyStore(Store):
    """A ``Store`` opened read-only (``mode=ro``): its query helpers work, writes fail. The
    file must exist and carry this perfport's schema, or an older one it reads as it is
    (``schema.READABLE_FROM``); it is never migrated from here, since
    migrating takes the write lock (``BEGIN IMMEDIATE``) and waits behind any writer."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 5.0) -> None:
        self.path = str(path)
        if not Path(path).is_file():
            check_path(self.path, create=True)  # a folder, a FIFO: say which
            raise StoreError(f"no results database at {self.path}; give an existing --db")
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        try:
            # Any thread may use it (the daemon's readers hold a lock around it).
            self._conn = sqlite3.connect(
                uri, uri=True, timeout=busy_timeout_s, isolation_level=None,
                check_same_thread=False,
            )  # fmt: skip
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            mode = self._conn.execute("PRAGMA journal_mode").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise unusable(self.path, exc) from None
        if not READABLE_FROM <= version <= SCHEMA_VERSION:  # those it reads as they are
            tables = self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            self._conn.close()
            if version == 0:  # not made by perfport: migrating it would write into it
                what = "an SQLite database but not a perfport one" if tables else "empty"
                raise StoreError(f"{self.path} is {what}; give the --db of a perfport run")
            raise StoreError(
                f"{self.path} has schema version {version}, not {SCHEMA_VERSION}; open it once "
                "with this perfport (e.g. 'perfport results --db PATH') to migrate it"
            )
        read_as_current(self._conn)
        self.wal = mode == "wal"


def count_outcomes_of_strategy(store: Store, strategy: str) -> int:
    """How many results the campaigns of ``strategy`` hold (the daemon's cap on the refusals
    clients report, stored under the strategy 'reported')."""
    return int(store.query(_REPORTED, (strategy,))[0][0])
