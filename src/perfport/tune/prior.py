"""A prior for a search from what other devices measured: the transfer half of the default
strategy. GPUs disagree on the best configuration, but configurations that did well on several
of them are good first guesses on a new one (docs/results/2026-11-22-strategies.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
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
