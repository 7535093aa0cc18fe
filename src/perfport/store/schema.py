"""The results database schema and its migrations (SQLite, PRAGMA user_version)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import lru_cache

from perfport._core import StoreError
from perfport._core.interrupts import guarded
from perfport.store.integrity import check_watched, mark_all_checked, watch_statements


def _incremental_check(conn: sqlite3.Connection, path: str) -> None:
    """7 -> 8: the incremental value check (store/integrity.py): its table and triggers, and
    one check of every row of the watched tables, so the marks start at their last rows (a bad
    row refuses the database and rolls the migration back, leaving it as it was)."""
    for statement in watch_statements():
        conn.execute(statement)
    check_watched(conn, path, everything=True)
    mark_all_checked(conn)


# MIGRATIONS[i] upgrades a database from version i to i + 1. Append only; never edit one that
# has shipped, since databases in the wild are at every version.
MIGRATIONS: tuple[str | Callable[[sqlite3.Connection, str], None], ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE devices (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        backend TEXT NOT NULL,
        name TEXT NOT NULL,
        vendor TEXT NOT NULL,
        type TEXT NOT NULL,
        driver TEXT NOT NULL,
        info TEXT NOT NULL               -- DeviceInfo as JSON
    );
    CREATE TABLE kernels (
        id INTEGER PRIMARY KEY,
        source_hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        language TEXT NOT NULL,
        entry TEXT NOT NULL,
        source TEXT NOT NULL,
        spec TEXT NOT NULL               -- KernelSpec.describe() as JSON
    );
    CREATE TABLE problems (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE         -- canonical JSON, defaults included
    );
    CREATE TABLE configs (
        id INTEGER PRIMARY KEY,
        kernel_id INTEGER NOT NULL REFERENCES kernels(id),
        key TEXT NOT NULL,               -- canonical JSON
        UNIQUE (kernel_id, key)
    );
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        device_id INTEGER NOT NULL REFERENCES devices(id),
        kernel_id INTEGER NOT NULL REFERENCES kernels(id),
        problem_id INTEGER NOT NULL REFERENCES problems(id),
        strategy TEXT NOT NULL,
        seed INTEGER NOT NULL,
        settings TEXT NOT NULL,          -- timing, verification, limits (JSON)
        space TEXT NOT NULL,             -- pruning report (JSON)
        status TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        config_id INTEGER NOT NULL REFERENCES configs(id),
        outcome TEXT NOT NULL,
        message TEXT NOT NULL,
        n INTEGER NOT NULL,
        min_ms REAL, median_ms REAL, mean_ms REAL, std_ms REAL, ci_low_ms REAL, ci_high_ms REAL,
        compile_ms REAL,
        tool_version TEXT NOT NULL,
        created REAL NOT NULL,
        UNIQUE (campaign_id, config_id)
    );
    CREATE TABLE samples (
        result_id INTEGER PRIMARY KEY REFERENCES results(id),
        times BLOB NOT NULL              -- every timed launch, float64 little-endian, ms
    );
    CREATE INDEX results_by_config ON results (config_id);
    CREATE INDEX campaigns_by_target ON campaigns (kernel_id, device_id, problem_id);
    """,
    # 1 -> 2: writers of one campaign claim a configuration before measuring it, so two
    # processes never measure it both; a claim lapses at its expiry (its writer was killed).
    """
    CREATE TABLE claims (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        config_id INTEGER NOT NULL REFERENCES configs(id),
        writer TEXT NOT NULL,            -- host:pid:nonce of the tune session holding it
        expires REAL NOT NULL,           -- time.time() after which the claim is void
        PRIMARY KEY (campaign_id, config_id)
    );
    """,
    # 2 -> 3: whether each result's outputs were checked, and against what; NULL in rows
    # stored before, whose verification is unknown.
    """
    ALTER TABLE results ADD COLUMN verification TEXT;     -- Check value
    ALTER TABLE results ADD COLUMN verified_against TEXT; -- numpy reference, reference configuration ...
    """,
    # 3 -> 4: split plans across devices (perfport.split; read and written by store/plans.py)
    """
    CREATE TABLE split_plans (
        id INTEGER PRIMARY KEY,
        kernel_id INTEGER NOT NULL REFERENCES kernels(id),
        problem_id INTEGER NOT NULL REFERENCES problems(id),
        devices TEXT NOT NULL,           -- the devices' fingerprints, in plan order (JSON)
        dimension INTEGER NOT NULL,
        configs TEXT NOT NULL,           -- each device's configuration, in plan order (JSON)
        plan TEXT NOT NULL,              -- SplitPlan as JSON
        run TEXT,                        -- the measured run (JSON); NULL if never run
        tool_version TEXT NOT NULL,
        created REAL NOT NULL
    );
    CREATE INDEX split_plans_by_kernel ON split_plans (kernel_id, problem_id);
    """,
    # 4 -> 5: measured device ceilings (perfport roofline; read and written by store/ceilings.py),
    # the latest per device fingerprint
    """
    CREATE TABLE ceilings (
        fingerprint TEXT PRIMARY KEY,    -- DeviceInfo.fingerprint
        device TEXT NOT NULL,            -- DeviceInfo as JSON (the name, for people)
        copy_gbps REAL NOT NULL,
        read_gbps REAL NOT NULL,
        write_gbps REAL NOT NULL,
        fp32_gflops REAL NOT NULL,
        fp64_gflops REAL,                -- NULL: the device has no float64
        detail TEXT NOT NULL,            -- each benchmark's sizes and times (JSON)
        tool_version TEXT NOT NULL,
        created REAL NOT NULL
    );
    """,
    # 5 -> 6: calibrated performance models per device (perfport.model; store/calibrations.py)
    """
    CREATE TABLE calibrations (
        id INTEGER PRIMARY KEY,
        device_id INTEGER NOT NULL REFERENCES devices(id),
        output TEXT NOT NULL,            -- the model's output feature
        expression TEXT NOT NULL,        -- the model's formula
        calibration TEXT NOT NULL,       -- Calibration as JSON (model, parameters, residuals)
        tool_version TEXT NOT NULL,
        created REAL NOT NULL
    );
    CREATE INDEX calibrations_by_device ON calibrations (device_id);
    """,
    # 6 -> 7: each campaign's results by outcome and time, so 'perfport results' counts outcomes
    # and finds the best (store/best.py), and the prior from other devices' results
    # (queries.transfer_summary) reads each campaign's ok times, from this index alone: no
    # sort, no pass over the wide result rows.
    """
    CREATE INDEX results_by_campaign_outcome
        ON results (campaign_id, outcome, median_ms, config_id, verification);
    """,
    # 7 -> 8: the value check reads only rows not yet checked (a function: triggers hold ';')
    _incremental_check,
    # 8 -> 9: the copy bandwidth by size beside the ceilings (perfport roofline); NULL in
    # ceilings measured before, which keep working against the large-array ceiling alone
    """
    ALTER TABLE ceilings ADD COLUMN copy_curve TEXT;  -- [[bytes moved, GB/s], ...] (JSON)
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring the database to SCHEMA_VERSION, one transaction per step. The version is read
    under the write lock, so processes opening a new database at once do not collide."""
    while True:
        with guarded():  # never an interrupt between BEGIN and the try
            if _step(conn, path):
                return


def _step(conn: sqlite3.Connection, path: str) -> bool:
    """One migration step in its own transaction; True when the database is up to date."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} has schema version {version}, newer than this perfport's "
                f"{SCHEMA_VERSION}; upgrade perfport to use it"
            )
        if version == SCHEMA_VERSION:
            if path != _BLUEPRINT:
                _check_objects(conn, path)
            conn.execute("COMMIT")
            return True
        if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise StoreError(
                f"{path} is an SQLite database but not a perfport one; give another --db path"
            )
        migration = MIGRATIONS[version]
        try:
            if callable(migration):
                migration(conn, path)
            else:
                for statement in _statements(migration):
                    conn.execute(statement)
        except sqlite3.OperationalError as exc:  # "duplicate column": not what it says it is
            raise StoreError(
                f"{path} says schema version {version} but its tables are not that version's ({exc}); "
                f"it was changed by another program or is damaged: {_FIX}"
            ) from None
        conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return False


_BLUEPRINT = ":memory:"  # the current schema, built fresh to compare a database with
_FIX = "give another --db path, or restore a copy of the file"


@lru_cache(maxsize=1)
def _expected() -> dict[str, tuple[str, str]]:
    """Every table, index and trigger of the current schema: name -> (type, SQL)."""
    conn = sqlite3.connect(_BLUEPRINT, isolation_level=None)
    try:
        migrate(conn, _BLUEPRINT)
        rows = conn.execute("SELECT name, type, sql FROM sqlite_master WHERE sql IS NOT NULL")
        return {name: (kind, sql) for name, kind, sql in rows}
    finally:
        conn.close()


def _check_objects(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a database whose tables were dropped (a tune failed on the first missing table,
    after writing its campaign); build a dropped index or trigger again (nothing noticed a
    missing one). Rows changed while a value-check trigger was gone were never listed for the
    check: every row is checked once more."""
    present = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    missing = {name: kind_sql for name, kind_sql in _expected().items() if name not in present}
    for name, (kind, _) in missing.items():
        if kind == "table":
            raise StoreError(
                f"{path} has no table {name!r}: it was changed by hand or is damaged; {_FIX}"
            )
    for _, sql in missing.values():
        conn.execute(sql)
    if any(kind == "trigger" for kind, _ in missing.values()):
        check_watched(conn, path, everything=True)
        mark_all_checked(conn)


def _statements(script: str) -> list[str]:
    # executescript() would commit implicitly; run statements one by one inside our transaction.
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
