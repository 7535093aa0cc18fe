"""Checks of a results database on opening: SQLite's own quick check before writing into it,
and every stored value of a kind perfport reads back (enums, JSON, numbers, sample blobs).

A damaged page or a value perfport would never have written (an edited file, a bit flip, a
half-copied backup) is refused in one line that names the table and says how to recover,
instead of a traceback halfway through a report or a campaign that makes the damage worse.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from perfport._core import Outcome, StoreError

_NUMBER = "typeof({}) IN ('integer', 'real')"
_OPTIONAL_NUMBER = "typeof({}) IN ('integer', 'real', 'null')"
_JSON_OBJECT = "json_valid({0}) AND json_type({0}) = 'object'"


def recovery_hint(path: str) -> str:
    return (
        f"recover what it holds with 'sqlite3 {path} .recover | sqlite3 recovered.db' and give "
        "--db recovered.db, or restore a backup"
    )


def quick_check(conn: sqlite3.Connection, path: str) -> None:
    """SQLite's PRAGMA quick_check: refuse a file with a damaged page before writing into it,
    since every write could spread the damage."""
    try:
        # A report begins "*** in database main ***" and names one problem a line.
        rows = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
        verdict = [line for r in rows for line in str(r).splitlines() if line and "***" not in line]
    except sqlite3.DatabaseError as exc:
        if "malformed" not in str(exc):
            raise  # not an SQLite file at all: the caller says so
        verdict = [str(exc)]
    if verdict != ["ok"]:
        verdict = verdict or ["damaged"]
        raise StoreError(
            f"{path} is damaged ({verdict[0][:120]}); nothing was written to it; "
            + recovery_hint(path)
        )


def _rules(statuses: Iterable[str]) -> list[tuple[str, str, str]]:
    """(table, what is wrong, SQL condition of a good row)."""
    outcomes = ", ".join(f"'{o.value}'" for o in Outcome)
    states = ", ".join(f"'{s}'" for s in statuses)
    timings = " AND ".join(
        _OPTIONAL_NUMBER.format(c)
        for c in ("min_ms", "median_ms", "mean_ms", "std_ms", "ci_low_ms", "ci_high_ms")
    )
    return [
        ("devices", "info is not a JSON object", _JSON_OBJECT.format("info")),
        ("kernels", "spec is not a JSON object", _JSON_OBJECT.format("spec")),
        ("problems", "key is not a JSON object", _JSON_OBJECT.format("key")),
        ("configs", "key is not a JSON object", _JSON_OBJECT.format("key")),
        (
            "campaigns",
            "status, seed, settings or space is invalid",
            f"status IN ({states}) AND typeof(seed) = 'integer' AND "
            f"{_JSON_OBJECT.format('settings')} AND {_JSON_OBJECT.format('space')}",
        ),
        (
            "results",
            "outcome, count or timings are invalid",
            f"outcome IN ({outcomes}) AND typeof(n) = 'integer' AND {timings} AND "
            f"{_OPTIONAL_NUMBER.format('compile_ms')} AND {_NUMBER.format('created')}",
        ),
        (
            "samples",
            "times is not a list of float64",
            "typeof(times) = 'blob' AND length(times) % 8 = 0",
        ),
    ]


def check_values(conn: sqlite3.Connection, path: str, statuses: Iterable[str]) -> None:
    """Refuse a database holding a value perfport would not have written and cannot read."""
    for table, wrong, good in _rules(statuses):
        row = conn.execute(f"SELECT rowid FROM {table} WHERE NOT ({good}) LIMIT 1").fetchone()
        if row is not None:
            quick_check(conn, path)  # a damaged page reads as garbage rows: say which it is
            raise StoreError(
                f"{path}: {table} row {row[0]}: {wrong}, so the file was changed outside "
                f"perfport; nothing was read or written; delete or fix that row (sqlite3 {path} "
                f'"DELETE FROM {table} WHERE rowid = {row[0]}") or restore a backup'
            )
