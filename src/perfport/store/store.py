"""The results database. Every result is committed as it arrives (WAL, synchronous=FULL), so a
campaign killed at any point keeps everything it measured and resumes from there."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import (
    Check,
    Config,
    DeviceInfo,
    Measurement,
    Outcome,
    Problem,
    StoreError,
)
from perfport._core.interrupts import guarded
from perfport._core.version import __version__
from perfport.space import PruningReport
from perfport.store.connection import check_path, connect, write_ahead_log, write_protected
from perfport.store.identities import Identities
from perfport.store.integrity import (
    CAMPAIGN_SIDE_TABLES,
    check_values,
    quick_check,
    recovery_hint,
    unusable,
    vouched,
)
from perfport.store.resume import other_identity, other_settings
from perfport.store.schema import migrate, read_as_current
from perfport.store.writers import gone as _gone


class CampaignStatus(Enum):
    RUNNING = "running"  # in progress, or killed before it could say otherwise
    COMPLETE = "complete"  # the strategy ran out of configurations
    BUDGET = "budget"  # stopped by the evaluation or time budget
    INTERRUPTED = "interrupted"  # Ctrl-C or SIGTERM
    FAILED = "failed"  # could not go on (e.g. the worker could not start)

    @property
    def finished(self) -> bool:
        """Whether the search ended on its own: out of configurations or budget."""
        return self in (CampaignStatus.COMPLETE, CampaignStatus.BUDGET)


class ClaimState(Enum):
    """The answer to a writer asking to measure one configuration of a campaign."""

    CLAIMED = "claimed"  # the asking writer holds it now: measure it
    STORED = "stored"  # the campaign has a result for it already
    HELD = "held"  # another writer's claim on it has not expired
    SPENT = "spent"  # the campaign's results fill its budget
    BOOKED = "booked"  # results and other writers' live claims fill the budget


@dataclass(frozen=True)
class Campaign:
    id: int
    key: str
    device_id: int
    kernel_id: int
    problem_id: int
    strategy: str
    seed: int
    status: CampaignStatus
    created: float


class Store(Identities):
    """A perfport results database (SQLite). Use as a context manager.

    >>> import perfport
    >>> from perfport.store import best_results
    >>> with perfport.Store("perfport.db") as store:  # doctest: +SKIP
    ...     print([(r.kernel, r.device, dict(r.best or {})) for r in best_results(store)])
    ...     print(len(store.measurements(store.campaign("vector_add-4f1c2a9e0b3d"))))
    """

    frozen = False  # read as an immutable file (connection.write_protected)

    def __init__(
        self,
        path: str | Path = "perfport.db",
        create: bool = True,
        *,
        shared: bool = False,
        lock_timeout_s: float | None = None,
    ) -> None:
        """``lock_timeout_s``: a write that finds the database locked by another process fails
        (sqlite3.OperationalError, "database is locked") after this long, instead of waiting
        for it however long (a server, which must answer, and must not print a CLI notice)."""
        self.path = str(path)
        check_path(self.path, create)
        # To read a write-protected file: immutable, so it leaves no -wal or -shm behind.
        self.frozen = not create and write_protected(self.path)
        try:
            # shared: one connection used by several threads in turn (the caller serialises)
            self._conn = connect(
                self.path, shared=shared, timeout=lock_timeout_s, frozen=self.frozen
            )
            if create:  # opened to write: a damaged file is refused before anything is written
                quick_check(self._conn, self.path)
            # The schema first: a file that is not a perfport store is refused unchanged (the
            # journal mode is written into the file).
            migrate(self._conn, self.path, frozen=self.frozen)
            read_as_current(self._conn)  # a frozen file of an older version it reads as it is
            check_values(self._conn, self.path, [s.value for s in CampaignStatus])
            mode = write_ahead_log(self._conn)
        except StoreError:
            self._conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            if hasattr(self, "_conn"):
                self._conn.close()
            if "malformed" in str(exc):
                raise StoreError(
                    f"{self.path} is damaged ({exc}); {recovery_hint(self.path)}"
                ) from None
            raise unusable(self.path, exc) from None
        self.wal = mode == "wal"

    def check_everything(self) -> None:
        """Check every stored value, not only the rows stored or changed since the last check
        (what opening does): for a file that may have been damaged below SQLite, e.g. a bit
        flip. Raises StoreError naming the first bad row."""
        check_values(self._conn, self.path, [s.value for s in CampaignStatus], everything=True)

    def twin(self, lock_timeout_s: float | None = None) -> Store:
        """Another connection to this database, for another thread (an SQLite connection
        belongs to one): the file was migrated and checked when this one opened, so the twin
        skips both (on a large store they read every row). ``lock_timeout_s``: fail after
        this long on a locked database instead of waiting for it."""
        twin = object.__new__(type(self))
        twin.path, twin.wal, twin.frozen = self.path, self.wal, self.frozen
        twin._conn = connect(self.path, timeout=lock_timeout_s, frozen=self.frozen)
        read_as_current(twin._conn)
        return twin

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction around everything inside (all or nothing): the store's own
        transactions inside it join it instead of committing. An interrupt is delivered after
        the COMMIT or the ROLLBACK."""
        with guarded():
            if self._conn.in_transaction:  # inside another atomic(): the outer one commits
                yield
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (a full disk can end the transaction).
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    # ---- campaigns --------------------------------------------------------------------
    def check_campaign_key(
        self,
        key: str,
        device: DeviceInfo,
        kernel_hash: str,
        problem: Problem,
        strategy: str | None = None,
        settings: Mapping[str, Any] | None = None,
        *,
        kernel_name: str = "",
    ) -> None:
        """Refuse, before anything is written, a key naming a campaign of another device,
        kernel (by source hash) or problem, saying which (``kernel_name`` tells an edited
        source from another kernel): open_campaign would refuse it too, but only after
        the device, kernel and problem rows were stored. Given ``strategy`` and ``settings``
        (what open_campaign stores), refuse also a campaign run with another strategy, seed,
        verification, timing or launch: resuming it would mix those results in one campaign.
        Limits (budget, time, timeouts) may change from one session to the next."""
        row = self._conn.execute(
            "SELECT d.fingerprint, k.name, k.source_hash, p.key, c.strategy, c.settings "
            "FROM campaigns c JOIN devices d ON d.id = c.device_id "
            "JOIN kernels k ON k.id = c.kernel_id JOIN problems p ON p.id = c.problem_id "
            "WHERE c.key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return
        if (row[0], row[2], row[3]) != (device.fingerprint, kernel_hash, problem.key):
            now = (device.fingerprint, kernel_name, kernel_hash, problem.key)
            raise StoreError(f"campaign {key!r} in {self.path} {other_identity(row[:4], now)}")
        was = {"strategy": row[4], **json.loads(row[5])}
        differ = other_settings(was, {"strategy": strategy, **(settings or {})})
        if differ:
            raise StoreError(
                f"campaign {key!r} in {self.path} was run with {differ}; give a new --campaign "
                "key, or the campaign's own settings to resume it"
            )

    def open_campaign(
        self,
        key: str,
        ids: tuple[int, int, int],
        strategy: str,
        seed: int,
        settings: dict[str, Any],
        report: PruningReport,
        spec: Mapping[str, Any] | None = None,
    ) -> Campaign:
        """The campaign with this key for (device_id, kernel_id, problem_id): created, or found
        again to resume it. A key that names a campaign of another device, kernel or problem is
        an error. ``spec``: the description it runs with (``KernelSpec.describe``), kept with
        the campaign, since the kernel's row keeps the one stored first (an edited default or
        values under the same source and name is the same kernel); None keeps what it has."""
        with self.atomic():
            self._open_campaign(key, ids, strategy, seed, settings, report)
            if spec is not None:  # a resumed campaign's is the latest it ran with
                self._conn.execute(
                    "INSERT INTO campaign_specs (campaign_id, spec) SELECT id, ? FROM campaigns "
                    "WHERE key = ? ON CONFLICT (campaign_id) DO UPDATE SET spec = excluded.spec",
                    (json.dumps(spec), key),
                )
        return self.campaign(key)

    def _open_campaign(
        self,
        key: str,
        ids: tuple[int, int, int],
        strategy: str,
        seed: int,
        settings: dict[str, Any],
        report: PruningReport,
    ) -> None:
        row = self._conn.execute("SELECT * FROM campaigns WHERE key = ?", (key,)).fetchone()
        if row is None:
            now = time.time()
            new = self._conn.execute(
                "INSERT INTO campaigns (key, device_id, kernel_id, problem_id, strategy, seed, "
                "settings, space, status, tool_version, created, updated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, *ids, strategy, seed, json.dumps(settings), json.dumps(report.to_json()),
                 CampaignStatus.RUNNING.value, __version__, now, now),
            ).lastrowid  # fmt: skip
            # A campaign deleted by hand frees its id, which this one may take: a description
            # or claims left under it (deleted without them) are another campaign's.
            for table in CAMPAIGN_SIDE_TABLES:
                self._conn.execute(f"DELETE FROM {table} WHERE campaign_id = ?", (new,))
        else:
            # The kernel by its code, as check_campaign_key compares it: a campaign stored
            # before kernels were told apart by name resumes under its row of another name.
            same_kernel = self.kernel_source(row[3]) == self.kernel_source(ids[1])
            if (row[2], row[4]) != (ids[0], ids[2]) or not same_kernel:
                why = other_identity(self._identity(row[2:5]), self._identity(ids))
                raise StoreError(f"campaign {key!r} in {self.path} {why}")
            self._conn.execute(
                "UPDATE campaigns SET status = ?, updated = ? WHERE id = ?",
                (CampaignStatus.RUNNING.value, time.time(), row[0]),
            )

    def _identity(self, ids: tuple[int, int, int]) -> tuple[str, ...]:
        """(device fingerprint, kernel name, source hash, problem key) of rows' ids."""
        row = self._conn.execute(
            "SELECT d.fingerprint, k.name, k.source_hash, p.key FROM devices d, kernels k, "
            "problems p WHERE d.id = ? AND k.id = ? AND p.id = ?",
            ids,
        ).fetchone()
        return tuple(str(v) for v in row) if row else ("", "", "", "")

    def campaign(self, key: str) -> Campaign:
        row = self._conn.execute(
            "SELECT id, key, device_id, kernel_id, problem_id, strategy, seed, status, created "
            "FROM campaigns WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no campaign {key!r} in {self.path}")
        return Campaign(*row[:7], CampaignStatus(row[7]), row[8])  # type: ignore[call-arg]

    def set_status(self, campaign: Campaign, status: CampaignStatus) -> None:
        self._conn.execute(
            "UPDATE campaigns SET status = ?, updated = ? WHERE id = ?",
            (status.value, time.time(), campaign.id),
        )

    # ---- results ----------------------------------------------------------------------
    def record(self, campaign: Campaign, m: Measurement) -> bool:
        """Commit one result with its samples, atomically. False (and nothing written) if the
        campaign already has a result for this configuration."""
        return self.record_many(campaign, [m]) == 1

    def record_many(self, campaign: Campaign, measurements: Iterable[Measurement]) -> int:
        """Commit results in one transaction (all or nothing); returns how many were new. An
        interrupt during it is delivered after the COMMIT or the ROLLBACK."""
        with self.atomic(), vouched(self._conn, self.path):
            added = sum(self._insert(campaign, m) for m in measurements)
            self._conn.execute(
                "UPDATE campaigns SET updated = ? WHERE id = ?", (time.time(), campaign.id)
            )
        return added

    def _insert(self, campaign: Campaign, m: Measurement) -> bool:
        s = m.stats
        config_id = self.config_id(campaign.kernel_id, m.config)
        # A stored result ends any claim on its configuration, whoever held it.
        self._conn.execute(
            "DELETE FROM claims WHERE campaign_id = ? AND config_id = ?", (campaign.id, config_id)
        )
        cur = self._conn.execute(
            "INSERT OR IGNORE INTO results (campaign_id, config_id, outcome, message, n, min_ms, "
            "median_ms, mean_ms, std_ms, ci_low_ms, ci_high_ms, compile_ms, tool_version, created, "
            "verification, verified_against) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (campaign.id, config_id, m.outcome.value, m.message,
             len(m.times_ms), s and s.min, s and s.median, s and s.mean, s and s.std, s and s.ci_low,
             s and s.ci_high, m.compile_ms, __version__, time.time(),
             m.check and m.check.value, m.verified_against),
        )  # fmt: skip
        if cur.rowcount and m.times_ms:
            blob = np.asarray(m.times_ms, dtype="<f8").tobytes()
            self._conn.execute(
                "INSERT INTO samples (result_id, times) VALUES (?, ?)", (cur.lastrowid, blob)
            )
        return bool(cur.rowcount)

    def measurements(self, campaign: Campaign) -> list[Measurement]:
        """Every result of a campaign, in the order it was measured."""
        return [m for m, _ in self._measurement_rows("r.campaign_id = ?", (campaign.id,))]

    def measurements_after(self, campaign: Campaign, after: int) -> list[tuple[Measurement, int]]:
        """The campaign's results stored after the result with id ``after`` (0: all), each
        with its id: what other writers stored since a writer last looked."""
        where = "r.campaign_id = ? AND r.id > ?"
        return list(self._measurement_rows(where, (campaign.id, after)))

    # ---- claims (many writers of one campaign) ----------------------------------------
    def claim(
        self,
        campaign: Campaign,
        config: Config,
        writer: str,
        lease_s: float,
        budget: int | None = None,
    ) -> ClaimState:
        """Ask to measure ``config`` for ``writer``, holding it for ``lease_s`` seconds (renew
        with ``renew_claims``). ``budget``: the campaign's evaluation budget, which results
        and every writer's live claims share."""
        with self.atomic():
            return self._claim(campaign, config, writer, lease_s, budget)

    def _claim(
        self, campaign: Campaign, config: Config, writer: str, lease_s: float, budget: int | None
    ) -> ClaimState:
        config_id = self.config_id(campaign.kernel_id, config)
        now = time.time()
        one = self._conn.execute
        holders = one(
            "SELECT DISTINCT writer FROM claims WHERE campaign_id = ? AND expires > ?",
            (campaign.id, now),
        ).fetchall()
        for (other,) in holders:  # a writer known dead gives its claims back now
            if other != writer and _gone(other):
                one("DELETE FROM claims WHERE campaign_id = ? AND writer = ?", (campaign.id, other))
        if one(
            "SELECT 1 FROM results WHERE campaign_id = ? AND config_id = ?",
            (campaign.id, config_id),
        ).fetchone():
            return ClaimState.STORED
        holder = one(
            "SELECT writer FROM claims WHERE campaign_id = ? AND config_id = ? AND expires > ?",
            (campaign.id, config_id, now),
        ).fetchone()
        if holder is not None and holder[0] != writer:
            return ClaimState.HELD
        if budget is not None:
            results = one(
                "SELECT count(*) FROM results WHERE campaign_id = ?", (campaign.id,)
            ).fetchone()[0]
            if results >= budget:
                return ClaimState.SPENT
            booked = one(
                "SELECT count(*) FROM claims WHERE campaign_id = ? AND config_id != ? "
                "AND expires > ?",
                (campaign.id, config_id, now),
            ).fetchone()[0]
            if results + booked >= budget:
                return ClaimState.BOOKED
        one(
            "INSERT OR REPLACE INTO claims (campaign_id, config_id, writer, expires) "
            "VALUES (?, ?, ?, ?)",
            (campaign.id, config_id, writer, now + lease_s),
        )
        return ClaimState.CLAIMED

    def release_claims(self, campaign: Campaign, writer: str, config: Config | None = None) -> None:
        """Give back ``writer``'s claim on ``config`` (None: all its claims in the campaign)."""
        sql = "DELETE FROM claims WHERE campaign_id = ? AND writer = ?"
        params: list[Any] = [campaign.id, writer]
        if config is not None:
            sql += " AND config_id = ?"
            params.append(self.config_id(campaign.kernel_id, config))
        with guarded():
            self._conn.execute(sql, tuple(params))

    def renew_claims(self, campaign: Campaign, writer: str, lease_s: float) -> None:
        """Move the expiry of ``writer``'s claims ``lease_s`` seconds from now."""
        with guarded():
            self._conn.execute(
                "UPDATE claims SET expires = ? WHERE campaign_id = ? AND writer = ?",
                (time.time() + lease_s, campaign.id, writer),
            )

    def live_claims(self, campaign: Campaign, other_than: str = "") -> frozenset[tuple[str, str]]:
        """The unexpired claims of writers other than ``other_than`` in the campaign, as
        (configuration key, writer) pairs."""
        rows = self._conn.execute(
            "SELECT c.key, l.writer FROM claims l JOIN configs c ON c.id = l.config_id "
            "WHERE l.campaign_id = ? AND l.writer != ? AND l.expires > ?",
            (campaign.id, other_than, time.time()),
        ).fetchall()
        return frozenset((str(k), str(w)) for k, w in rows if not _gone(str(w)))

    def _measurement_rows(
        self, where: str, params: tuple[Any, ...]
    ) -> Iterator[tuple[Measurement, int]]:
        rows = self._conn.execute(
            "SELECT c.key, r.outcome, r.message, s.times, r.compile_ms, r.id, r.verification, "
            "r.verified_against FROM results r "
            "JOIN configs c ON c.id = r.config_id LEFT JOIN samples s ON s.result_id = r.id "
            f"WHERE {where} ORDER BY r.id",
            params,
        )
        for key, outcome, message, blob, compile_ms, rid, check, against in rows:
            times = tuple(np.frombuffer(blob, dtype="<f8").tolist()) if blob else ()
            m = Measurement(
                Config.of(json.loads(key)), Outcome(outcome), message, times, compile_ms,
                check=None if check is None else Check(check), verified_against=against,
            )  # fmt: skip
            yield m, rid

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Read-only SQL for the query helpers (results, export); rows index by column name."""
        cur = self._conn.cursor()
        cur.row_factory = sqlite3.Row
        return cur.execute(sql, params).fetchall()

    def stream(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[sqlite3.Row]:
        """``query`` one row at a time: an export of a million rows in constant memory."""
        cur = self._conn.cursor()
        cur.row_factory = sqlite3.Row
        yield from cur.execute(sql, params)
