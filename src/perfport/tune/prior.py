"""A prior for a search from what other devices measured: the transfer half of the default
strategy. GPUs disagree on the best configuration, but configurations that did well on several
of them are good first guesses on a new one (docs/results/2026-11-22-strategies.md)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfport._core import Problem
from perfport.space import Space
from perfport.store import Store, transfer_summary


@dataclass(frozen=True)
class Prior:
    """Scores for a space's legal configurations (higher is more promising), and how many
    other (device, problem) result sets they come from."""

    scores: np.ndarray
    sources: int


def transfer_prior(
    store: Store,
    kernel: str,
    space: Space,
    device_fingerprint: str,
    problem: Mapping[str, Any] | None = None,
) -> Prior | None:
    """Each legal configuration's mean fraction of the optimum over the other devices' results
    of ``kernel`` (same parameter names) in the store: 1.0 where it was the best everywhere,
    counting 0 where it failed or was not measured; NaN where it never ran. Results for
    ``problem`` are used when any other device has them, else those of every problem. None
    when no other device has results.

    The store sums the fractions per configuration in SQL (``transfer_summary``), so building
    the prior reads one row per distinct configuration, never every result: with 1.15M results
    it took 3.5 s and no added memory on a loaded 2-core machine, where reading every result
    took 262 s and 3 GB (``benchmarks/prior_scale.py``). A device's
    optimum is its best over all its configurations, including any that are illegal here."""
    names = [p.name for p in space.params]
    summary = transfer_summary(
        store, kernel, names, device_fingerprint, Problem.of(dict(problem or {})).key
    )
    if not summary.sources:
        summary = transfer_summary(store, kernel, names, device_fingerprint)
    if not summary.sources:
        return None
    total = np.zeros(len(space))
    at = space.indices([json.loads(key) for key in summary.fractions])
    fractions = np.fromiter(summary.fractions.values(), dtype=np.float64, count=len(at))
    total[at[at >= 0]] = fractions[at >= 0]
    return Prior(np.where(total > 0, total / summary.sources, np.nan), summary.sources)


def newest_result(store: Store) -> int:
    """The id of the newest stored result (0 in an empty store): one index lookup."""
    return int(store.query("SELECT coalesce(max(id), 0) FROM results")[0][0])


@dataclass
class LivePrior:
    """``transfer_prior`` read again as other devices' results land, for a search that runs
    beside theirs (``tune_many``). Between reads it costs one query of the newest result's id;
    a read (an SQL aggregation, seconds on a million results) happens only when results were
    stored since the last and at least ``spacing`` times the last read's duration has passed,
    so it never takes more than a tenth of the session's time."""

    store: Store
    kernel: str
    space: Space
    device_fingerprint: str
    problem: Mapping[str, Any] | None = None
    spacing: float = 10.0
    seen: int = -1  # the newest result's id when the prior in hand was read
    _due: float = field(default=0.0, init=False)

    def fresh(self) -> Prior | None:
        """The prior when it may have changed since the last call (None otherwise, or when no
        other device has results yet)."""
        now = time.monotonic()
        if now < self._due:
            return None
        newest = newest_result(self.store)
        if newest == self.seen:
            return None
        self.seen = newest
        prior = transfer_prior(
            self.store, self.kernel, self.space, self.device_fingerprint, self.problem
        )
        self._due = now + self.spacing * (time.monotonic() - now)
        return prior
