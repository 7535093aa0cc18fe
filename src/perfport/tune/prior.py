"""A prior for a search from what other devices measured: the transfer half of the default
strategy. GPUs disagree on the best configuration, but configurations that did well on several
of them are good first guesses on a new one (docs/results/2026-11-22-strategies.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport.space import Space
from perfport.store import ResultRow, Store, export_rows


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
    when no other device has results."""
    names = sorted(p.name for p in space.params)
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for row in export_rows(store, kernel=kernel):
        if row.device_fingerprint == device_fingerprint or sorted(row.config) != names:
            continue
        key = (row.device_fingerprint, json.dumps(dict(row.problem), sort_keys=True))
        groups.setdefault(key, []).append(row)
    wanted = json.dumps(dict(problem or {}), sort_keys=True)
    same_problem = [rows for (_, p), rows in groups.items() if p == wanted]
    chosen = same_problem or list(groups.values())
    total = np.zeros(len(space))
    used = 0
    for rows in chosen:
        times: dict[int, float] = {}
        for row in rows:
            if not row.ok or row.median_ms is None:
                continue
            i = space.index(row.config)
            if i is not None:
                times[i] = min(row.median_ms, times.get(i, np.inf))
        if not times:
            continue
        best = min(times.values())
        for i, t in times.items():
            total[i] += best / t
        used += 1
    if not used:
        return None
    return Prior(np.where(total > 0, total / used, np.nan), used)
