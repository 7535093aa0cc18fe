"""More timed launches of a stored result: re-timing adds samples to the result, never a
second result, so a campaign's count of configurations stays what its search measured."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfport._core import Config, Outcome, StoreError
from perfport._core.interrupts import guarded
from perfport._core.stats import summarize
from perfport.store.store import Campaign, Store


def add_samples(store: Store, campaign: Campaign, config: Config, times_ms: Sequence[float]) -> int:
    """Append ``times_ms`` to the samples of the campaign's ok result of ``config`` and update
    its statistics, in one transaction; returns the result's sample count afterwards."""
    if not times_ms or not all(np.isfinite(t) and t >= 0 for t in times_ms):
        raise StoreError(f"re-timing of {dict(config)}: give finite, non-negative times")
    with guarded():  # an interrupt lands before BEGIN or after COMMIT/ROLLBACK
        conn = store._conn  # the store's one connection, as every store module writes
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT r.id, s.times FROM results r JOIN configs c ON c.id = r.config_id "
                "LEFT JOIN samples s ON s.result_id = r.id "
                "WHERE r.campaign_id = ? AND c.key = ? AND r.outcome = ?",
                (campaign.id, config.key, Outcome.OK.value),
            ).fetchone()
            if row is None:
                raise StoreError(
                    f"campaign {campaign.key!r} has no correct result of {dict(config)} to re-time"
                )
            old = np.frombuffer(row[1], dtype="<f8") if row[1] else np.empty(0)
            times = np.concatenate([old, np.asarray(times_ms, dtype="<f8")])
            s = summarize(times.tolist())
            conn.execute(
                "UPDATE results SET n = ?, min_ms = ?, median_ms = ?, mean_ms = ?, std_ms = ?, "
                "ci_low_ms = ?, ci_high_ms = ? WHERE id = ?",
                (s.n, s.min, s.median, s.mean, s.std, s.ci_low, s.ci_high, row[0]),
            )
            conn.execute(
                "INSERT OR REPLACE INTO samples (result_id, times) VALUES (?, ?)",
                (row[0], times.astype("<f8").tobytes()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return s.n
