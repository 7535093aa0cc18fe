"""Switching a new database to WAL while another process reads it: SQLite answers "locked" at
once (no busy timeout for a journal-mode change), so four writers opening one new database
sometimes lost one of them (tests/tune/test_writers.py, about 1 run in 30)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from perfport.store.connection import write_ahead_log


class _Locked:
    """A connection whose journal-mode switch is refused ``times`` times, as while another
    process holds a read lock."""

    def __init__(self, times: int, message: str = "database is locked") -> None:
        self.times, self.message, self.tries = times, message, 0

    def execute(self, sql: str) -> Any:
        assert sql == "PRAGMA journal_mode = WAL"
        self.tries += 1
        if self.tries <= self.times:
            raise sqlite3.OperationalError(self.message)
        return self

    def fetchone(self) -> tuple[str]:
        return ("wal",)


def test_the_switch_waits_for_the_lock_like_any_other_statement():
    conn = _Locked(times=3)
    assert write_ahead_log(conn, wait_s=5.0) == "wal"  # type: ignore[arg-type]
    assert conn.tries == 4


def test_the_wait_is_bounded_and_other_errors_are_not_retried():
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        write_ahead_log(_Locked(times=10**9), wait_s=0.1)  # type: ignore[arg-type]
    other = _Locked(times=1, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk"):
        write_ahead_log(other, wait_s=5.0)  # type: ignore[arg-type]
    assert other.tries == 1


def test_a_real_database_is_switched(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    assert write_ahead_log(conn) == "wal"
    conn.close()
