"""Checks of a results database on opening: SQLite's own quick check before writing into it,
and every stored value of a kind perfport reads back (enums, JSON, numbers, sample blobs).

A damaged page or a value perfport would never have written (an edited file, a bit flip, a
half-copied backup) is refused in one line that names the table and says how to recover,
instead of a traceback halfway through a report or a campaign that makes the damage worse.

The tables that grow with every measurement (results, samples, configs) are checked
incrementally, since reading a million rows on every open took seconds: the ``meta`` table
holds each one's mark, the highest rowid whose values are known good (checked, or written by
perfport inside ``vouched``), and triggers list in ``unchecked`` every row changed or inserted
below the mark by any SQLite client, perfport or not. An open checks the rows above the marks
and the listed rows; ``check_values(everything=True)`` checks every row.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from perfport._core import Outcome, StoreError

_NUMBER = "typeof({}) IN ('integer', 'real')"
_OPTIONAL_NUMBER = "typeof({}) IN ('integer', 'real', 'null')"
_JSON_OBJECT = "json_valid({0}) AND json_type({0}) = 'object'"


class DatabaseLocked(StoreError):
    """Another process held the database's write lock past the connection's busy timeout."""


def recovery_hint(path: str) -> str:
    return (
        f"recover what it holds with 'sqlite3 {path} .recover | sqlite3 recovered.db' and give "
        "--db recovered.db, or restore a backup"
    )


def unusable(path: str, exc: sqlite3.DatabaseError) -> StoreError:
    """The one-line error for a file SQLite would not open as a results database."""
    if "locked" in str(exc):  # another writer held it past the busy timeout
        return DatabaseLocked(
            f"{path} is locked by another process (a perfport run, or an SQLite session with "
            "an open transaction); retry when it finishes"
        )
    read_only = _read_only(path, str(exc))
    if read_only == _BESIDE:
        return _left_beside(path)
    if read_only:
        # A WAL database needs its -shm file beside it, even to read, and opening one writes
        # to it: a read-only command cannot use it in place either. Any command may get here.
        tmp = tempfile.gettempdir()
        copy = shlex.quote(os.path.join(tmp, os.path.basename(path)))
        return StoreError(
            f"cannot use {path}: {read_only} read-only to you, and SQLite writes to a results "
            "database and creates files beside it even to read it; copy it to a folder you can "
            f"write and give the copy, e.g. cp {shlex.quote(path)} {shlex.quote(tmp)}/ && chmod "
            f"u+w {copy}, then run the command again with --db {copy}"
        )
    return StoreError(f"cannot use {path} as a results database ({exc}); give another --db path")


_BESIDE = "its -wal or -shm file is"


def _read_only(path: str, message: str) -> str:
    """What of a database SQLite could not write is read-only ("its folder ...", "it"), or ""
    where that is not why it failed."""
    if not os.path.isfile(path) or ("unable to open" not in message and "readonly" not in message):
        return ""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.access(folder, os.W_OK):
        return f"its folder {folder} is"
    if not os.access(path, os.W_OK):
        return "it is"
    # Writable to us, yet SQLite could not write: its -wal or -shm file, another user's.
    beside = any(os.path.exists(path + end) for end in ("-wal", "-shm"))
    return _BESIDE if "readonly" in message and beside else ""


def _left_beside(path: str) -> StoreError:
    """The fix for a -wal or -shm file the user cannot write beside a database they can: left
    by a process that could only read the database (another user's, or one that read the file
    while it was write-protected), it refuses every writer until it is gone."""
    present = [f for f in (f"{path}-wal", f"{path}-shm") if os.path.exists(f)]
    stale = [f for f in present if not os.access(f, os.W_OK)] or present
    names = " ".join(shlex.quote(f) for f in stale)
    are = "is" if len(stale) == 1 else "are"
    wal = f"{path}-wal"
    if wal in stale and os.path.isfile(wal) and os.path.getsize(wal) > 0:  # maybe commits
        return StoreError(
            f"cannot use {path}: {names} {are} read-only to you, and {wal} may hold changes not "
            f"yet written into {path}, so do not remove it; make them writable (chmod u+w {names}) "
            "or ask their owner to, then run the command again"
        )
    return StoreError(
        f"cannot use {path}: {names} {are} read-only to you (left by a program that could only read "
        f"the database); once no perfport or other SQLite program has {path} open, remove "
        f"{'it' if len(stale) == 1 else 'them'} (rm {names}) and run the command again"
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
    timings = " AND ".join(  # a time is never negative (a hand edit's -1 was shown as -0.38x)
        f"{_OPTIONAL_NUMBER.format(c)} AND ({c} IS NULL OR {c} >= 0)"
        for c in ("min_ms", "median_ms", "mean_ms", "std_ms", "ci_low_ms", "ci_high_ms")
    )
    return [
        ("devices", "info is not a JSON object", _JSON_OBJECT.format("info")),
        ("kernels", "spec is not a JSON object", _JSON_OBJECT.format("spec")),
        ("campaign_specs", "spec is not a JSON object", _JSON_OBJECT.format("spec")),
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


# The tables checked from their mark on (they grow with the measurements; the rest stay small).
WATCHED = ("results", "samples", "configs")


def check_values(
    conn: sqlite3.Connection, path: str, statuses: Iterable[str], *, everything: bool = False
) -> None:
    """Refuse a database holding a value perfport would not have written and cannot read: of
    the watched tables only the rows not yet known good, unless ``everything``."""
    for table, wrong, good in _rules(statuses):
        if table not in WATCHED:
            _refuse_first(conn, path, table, wrong, f"NOT ({good})")
    check_watched(conn, path, everything=everything)
    if everything:  # a full pass (~1 s a million results): not on every open
        check_orphans(conn, path)


# Rows left without a row they depend on (a hand DELETE of that row alone): counted in a
# campaign's budget, yet missing from export, or a result with n samples and none stored; a
# campaign's description or claims, which a later campaign given the freed id took for its own.
_ORPHANS = (
    ("results", "config_id NOT IN (SELECT id FROM configs) OR "
                "campaign_id NOT IN (SELECT id FROM campaigns)"),
    ("samples", "result_id NOT IN (SELECT id FROM results)"),
    ("results", "n > 0 AND outcome = 'ok' AND id NOT IN (SELECT result_id FROM samples)"),
    ("campaign_specs", "campaign_id NOT IN (SELECT id FROM campaigns)"),
    ("claims", "config_id NOT IN (SELECT id FROM configs) OR "
               "campaign_id NOT IN (SELECT id FROM campaigns)"),
)  # fmt: skip


def check_orphans(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a database holding rows whose configuration, campaign, result or samples were
    deleted, with the one command that deletes them all."""
    for table, orphan in _ORPHANS:
        row = conn.execute(f"SELECT rowid FROM {table} WHERE {orphan} LIMIT 1").fetchone()
        if row is not None:
            raise StoreError(
                f"{path}: {table} row {row[0]} lacks a row it depends on (deleted outside "
                f"perfport); nothing was read or written; delete such rows (sqlite3 {path} "
                f'"{_ORPHAN_FIX}") or restore a backup'
            )


_ORPHAN_FIX = " ".join(
    f"DELETE FROM {t} WHERE {w};" for t, w in (_ORPHANS[i] for i in (0, 2, 1, 3, 4))
)  # results first: the samples of the results it deletes are orphans after it


def check_watched(conn: sqlite3.Connection, path: str, *, everything: bool = False) -> None:
    """check_values of the watched tables alone."""
    for table, wrong, good in _rules(()):
        if table not in WATCHED:
            continue
        if everything:
            _refuse_first(conn, path, table, wrong, f"NOT ({good})")
        else:
            _check_unmarked(conn, path, table, wrong, good)


def _check_unmarked(conn: sqlite3.Connection, path: str, table: str, wrong: str, good: str) -> None:
    # Two queries, not one with OR: each is a rowid range or lookup, never a full scan.
    mark = _mark(conn, table)
    _refuse_first(conn, path, table, wrong, f"rowid > {mark} AND NOT ({good})")
    listed = f"rowid IN (SELECT row FROM unchecked WHERE tbl = '{table}')"
    _refuse_first(conn, path, table, wrong, f"{listed} AND NOT ({good})")


def _refuse_first(conn: sqlite3.Connection, path: str, table: str, wrong: str, bad: str) -> None:
    row = conn.execute(f"SELECT rowid FROM {table} WHERE {bad} LIMIT 1").fetchone()
    if row is not None:
        quick_check(conn, path)  # a damaged page reads as garbage rows: say which it is
        raise StoreError(
            f"{path}: {table} row {row[0]}: {wrong}, so the file was changed outside "
            f"perfport; nothing was read or written; delete or fix that row and the rows that "
            f'depend on it (sqlite3 {path} "{delete_row(table, int(row[0]))}") or restore a backup'
        )


def delete_row(table: str, rowid: int) -> str:
    """The SQL deleting a row with every row that depends on it (children first): deleting the
    row alone left results without their configuration or campaign, still counted towards a
    budget but missing from export, and results without their samples."""
    if table == "samples":  # a result without its samples reads as n times, none stored
        table = "results"  # a samples row's rowid is its result's id
    return " ".join(f"{s};" for s in _cascade(table, f"rowid = {rowid}"))


# The tables keyed by a campaign's id besides its results: deleted with the campaign, and
# never inherited by a new campaign that is given the id of one deleted by hand.
CAMPAIGN_SIDE_TABLES = ("claims", "campaign_specs")


def _cascade(table: str, where: str) -> list[str]:
    """DELETE statements for the rows of ``table`` matching ``where`` and their dependents."""
    rows = f"(SELECT rowid FROM {table} WHERE {where})"
    children = {
        "results": [("samples", f"result_id IN {rows}")],
        "campaigns": [("results", f"campaign_id IN {rows}"),
                      *((t, f"campaign_id IN {rows}") for t in CAMPAIGN_SIDE_TABLES)],
        "configs": [("results", f"config_id IN {rows}"), ("claims", f"config_id IN {rows}")],
        "devices": [("campaigns", f"device_id IN {rows}"), ("calibrations", f"device_id IN {rows}")],
        "kernels": [("configs", f"kernel_id IN {rows}"), ("campaigns", f"kernel_id IN {rows}"),
                    ("split_plans", f"kernel_id IN {rows}")],
        "problems": [("campaigns", f"problem_id IN {rows}"), ("split_plans", f"problem_id IN {rows}")],
    }.get(table, [])  # fmt: skip
    return [s for child, on in children for s in _cascade(child, on)] + [
        f"DELETE FROM {table} WHERE {where}"
    ]


def _mark(conn: sqlite3.Connection, table: str) -> int:
    # CAST: a hand-edited mark that is not a number reads as 0, so every row is checked.
    row = conn.execute(
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", (f"checked:{table}",)
    ).fetchone()
    return int(row[0] or 0) if row else 0


def mark_all_checked(conn: sqlite3.Connection) -> None:
    """Inside a write transaction whose reads found the watched tables good: move each mark to
    its table's last row and forget the listed rows."""
    for table in WATCHED:
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES "
            f"(?, (SELECT coalesce(max(rowid), 0) FROM {table}))",
            (f"checked:{table}",),
        )
    conn.execute("DELETE FROM unchecked")


@contextmanager
def vouched(conn: sqlite3.Connection, path: str) -> Iterator[None]:
    """Around perfport's inserts, inside their write transaction (so nobody else writes
    meanwhile): check the rows others stored since the marks (usually none), let the inserts
    run, then mark everything checked: perfport's own rows are good by construction."""
    check_watched(conn, path)
    yield
    mark_all_checked(conn)


def watch_statements() -> list[str]:
    """The schema of the incremental check (migration 7 -> 8): the list of rows to check again
    and, per watched table, the triggers that fill it."""
    statements = [
        "CREATE TABLE unchecked (tbl TEXT NOT NULL, row INTEGER NOT NULL, PRIMARY KEY (tbl, row))"
        " WITHOUT ROWID"
    ]
    for table in WATCHED:
        add = f"INSERT OR IGNORE INTO unchecked (tbl, row) VALUES ('{table}', NEW.rowid);"
        mark = f"(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'checked:{table}')"
        statements += [
            f"CREATE TRIGGER {table}_changed AFTER UPDATE ON {table} BEGIN {add} END",
            f"CREATE TRIGGER {table}_below_mark AFTER INSERT ON {table} "
            f"WHEN NEW.rowid <= {mark} BEGIN {add} END",
        ]
    return statements
