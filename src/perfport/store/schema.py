"""The results database schema and its migrations (SQLite, PRAGMA user_version)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import cache

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


# The kernels table since version 10: a kernel is its code (source_hash) and its name, so two
# specs over one source (two spec files exploring other parameters, a renamed spec) each keep
# their own results, name and description; before, the first spec's row took in them all.
_KERNELS = """
CREATE TABLE kernels (
    id INTEGER PRIMARY KEY,
    source_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    language TEXT NOT NULL,
    entry TEXT NOT NULL,
    source TEXT NOT NULL,
    spec TEXT NOT NULL,              -- KernelSpec.describe() as JSON
    UNIQUE (source_hash, name)
)
"""
_KERNEL_COLUMNS = "id, source_hash, name, language, entry, source, spec"


def _kernel_identity(conn: sqlite3.Connection, path: str) -> None:
    """9 -> 10: kernels by (source_hash, name). SQLite cannot drop a UNIQUE constraint, so the
    table is made again with every row and its id, which configs, campaigns and split_plans
    refer to (a rename would make them refer to the renamed table). A row that took in the
    results of several names stays one row: which result was whose is not stored."""
    conn.execute("PRAGMA defer_foreign_keys = ON")  # the references hold again before COMMIT
    conn.execute(f"CREATE TEMP TABLE kernels_before AS SELECT {_KERNEL_COLUMNS} FROM kernels")
    conn.execute("DROP TABLE kernels")
    conn.execute(_KERNELS)
    conn.execute(f"INSERT INTO kernels ({_KERNEL_COLUMNS}) SELECT * FROM kernels_before")
    conn.execute("DROP TABLE temp.kernels_before")


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
    # 9 -> 10: a kernel's identity is its source and its name (a function: the table is rebuilt)
    _kernel_identity,
    # 10 -> 11: the description each campaign ran with: a spec edited under the same source and
    # name (another default, other values) is the same kernel row, whose description is the
    # first stored; a campaign stored before has no row here, and its kernel's stands for it
    """
    CREATE TABLE campaign_specs (
        campaign_id INTEGER PRIMARY KEY REFERENCES campaigns(id),
        spec TEXT NOT NULL               -- KernelSpec.describe() as JSON
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
# The oldest version this perfport reads without migrating it (10 changed a constraint only;
# 11 added a table that read_as_current stands in for): a write-protected file, which cannot
# be migrated, at a version from here on is read as it is.
READABLE_FROM = 9


def read_as_current(conn: sqlite3.Connection) -> None:
    """Let a file read as it is at an older version (READABLE_FROM on) be queried as this
    version's: the tables later versions added, empty as they were when the migration made
    them, as temporary tables of this connection alone (nothing is written to the file).
    Nothing to do at SCHEMA_VERSION."""
    present = {name for (name,) in conn.execute("SELECT name FROM main.sqlite_master")}
    if "campaign_specs" not in present:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS campaign_specs "
                     "(campaign_id INTEGER PRIMARY KEY, spec TEXT NOT NULL)")  # fmt: skip


def migrate(conn: sqlite3.Connection, path: str, *, frozen: bool = False) -> None:
    """Bring the database to SCHEMA_VERSION in one transaction: every step or none, so a step
    that fails leaves the file as it was (each step used to commit on its own, and a file that
    was not what its version said kept the steps before the failing one). The file's tables
    are checked against its version first: another program's database is refused untouched.
    The version is read under the write lock, so processes opening a new database at once do
    not collide. ``frozen``: a file read as immutable, which nothing may write: one at a
    version from READABLE_FROM on is checked and read as it is."""
    with guarded():  # never an interrupt between BEGIN and the try
        conn.execute("BEGIN IMMEDIATE")
        try:
            _upgrade(conn, path, frozen)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite may have ended it already (a full disk)
                conn.execute("ROLLBACK")
            raise


def _upgrade(conn: sqlite3.Connection, path: str, frozen: bool) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    _check_tables(conn, path, version)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this perfport's "
            f"{SCHEMA_VERSION}; upgrade perfport to use it"
        )
    if frozen and READABLE_FROM <= version < SCHEMA_VERSION:
        return
    for step in range(version, SCHEMA_VERSION):
        migration = MIGRATIONS[step]
        try:
            if callable(migration):
                migration(conn, path)
            else:
                for statement in _statements(migration):
                    conn.execute(statement)
        except sqlite3.OperationalError as exc:  # "duplicate column": not what it says it is
            if "readonly" in str(exc):
                raise  # a file we may not write: the caller says so, with the fix
            raise StoreError(
                f"{path} says schema version {version} but its tables are not that version's "
                f"({exc}); it was changed by another program or is damaged; nothing was "
                f"written to it: {_FIX}"
            ) from None
    if version != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    _rebuild_objects(conn, path)


_FIX = "give another --db path, or restore a copy of the file"


@cache
def _blueprint(version: int) -> dict[str, tuple[str, str]]:
    """Every table, index and trigger of the schema at ``version``: name -> (type, SQL)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for migration in MIGRATIONS[:version]:
            if callable(migration):
                migration(conn, ":memory:")
            else:
                for statement in _statements(migration):
                    conn.execute(statement)
        rows = conn.execute("SELECT name, type, sql FROM sqlite_master WHERE sql IS NOT NULL")
        return {name: (kind, sql) for name, kind, sql in rows}
    finally:
        conn.close()


def _check_tables(conn: sqlite3.Connection, path: str, version: int) -> None:
    """Before anything is written: refuse a file without the tables of the version it claims.
    A file with none of perfport's tables is another program's (its user_version is its own),
    one that lacks some was changed by hand (a tune failed on the first missing table, after
    writing its campaign)."""
    present = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    blueprint = _blueprint(min(version, SCHEMA_VERSION))
    ours = [name for name, (kind, _) in blueprint.items() if kind == "table"]
    if (version == 0 and present) or (ours and not present.intersection(ours)):
        raise StoreError(
            f"{path} is an SQLite database but not a perfport one (none of perfport's tables); "
            "nothing was written to it; give another --db path"
        )
    missing = [name for name in ours if name not in present]
    if missing and version <= SCHEMA_VERSION:  # a newer version may have dropped one
        raise StoreError(
            f"{path} has no table {missing[0]!r}: it was changed by hand or is damaged; {_FIX}"
        )


def _rebuild_objects(conn: sqlite3.Connection, path: str) -> None:
    """Build a dropped index or trigger again (nothing noticed a missing one). Rows changed
    while a value-check trigger was gone were never listed for the check: every row is checked
    once more."""
    present = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    blueprint = _blueprint(SCHEMA_VERSION)
    missing = [kind_sql for name, kind_sql in blueprint.items() if name not in present]
    for _, sql in missing:
        conn.execute(sql)
    if any(kind == "trigger" for kind, _ in missing):
        check_watched(conn, path, everything=True)
        mark_all_checked(conn)


def _statements(script: str) -> list[str]:
    # executescript() would commit implicitly; run statements one by one inside our transaction.
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
