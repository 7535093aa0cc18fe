"""The prior ranked by a metric objective (``perfport tune --objective GFLOPs:max``): each
other device's results scored by the objective, as this run's spec computes it from a result's
configuration and time, instead of by time. A configuration whose work depends on its
parameters is not the best by a rate because it was the fastest, so a prior by time would
lead such a search to the relatives' worst. The time objective never comes here: its prior
is the store's sums (``prior._fractions``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core.metrics import ROOFLINE, ROOFLINE_SAME_BYTES, Objective, ResultMetrics
from perfport.space import Space
from perfport.store import Store, stored_ceilings


@dataclass(frozen=True)
class PriorObjective:
    """What a prior ranks the other devices' results by: ``goal``, computed with the spec
    ``description`` (``KernelSpec.describe()``) of the kernel searched."""

    goal: Objective
    description: Mapping[str, Any]


@dataclass(frozen=True)
class TimeRanked:
    """Other devices' results a prior ranked by time, since the objective cannot be computed
    from them: their devices, and why (one line)."""

    devices: tuple[str, ...]
    why: str

    def text(self) -> str:
        return f"{', '.join(self.devices)} ({self.why})"

    def to_json(self) -> dict[str, Any]:
        return {"devices": list(self.devices), "why": self.why}


# Each configuration's best ok time per (device, problem) result set, with the set's device
# and problem: the objective is computed per result, so no sum can be left to SQLite.
_ROWS = """
SELECT g.device_id, g.problem_id, d.name AS device, d.fingerprint, p.key AS problem,
       c.key AS config, MIN(r.median_ms) AS t
FROM campaigns g JOIN devices d ON d.id = g.device_id JOIN problems p ON p.id = g.problem_id
JOIN results r ON r.campaign_id = g.id JOIN configs c ON c.id = r.config_id
WHERE g.kernel_id IN ({kernels}) AND d.fingerprint != ? {problem}
  AND r.outcome = 'ok' AND r.median_ms > 0
GROUP BY g.device_id, g.problem_id, r.config_id
"""


def objective_fractions(
    store: Store,
    space: Space,
    device_fingerprint: str,
    ids: list[int],
    problem_key: str | None,
    by: PriorObjective,
) -> tuple[np.ndarray, int, tuple[TimeRanked, ...]]:
    """``prior._fractions`` by ``by.goal``: per legal configuration, the sum over the result
    sets of its fraction of the set's best score (each set counted once per configuration of
    ours, at its best), how many sets there are, and the sets ranked by time instead."""
    where = {"kernels": ",".join("?" * len(ids)), "problem": ""}
    params: tuple[Any, ...] = (*ids, device_fingerprint)
    if problem_key is not None:
        where["problem"], params = "AND p.key = ?", (*params, problem_key)
    sets: dict[tuple[int, int], list[Any]] = {}
    for r in store.query(_ROWS.format(**where), params):
        sets.setdefault((int(r["device_id"]), int(r["problem_id"])), []).append(r)
    total = np.zeros(len(space))
    ceilings = stored_ceilings(store) if sets else {}
    timed: dict[str, list[str]] = {}
    for rows in sets.values():
        configs = [json.loads(r["config"]) for r in rows]
        times = np.array([r["t"] for r in rows], dtype=np.float64)
        first = rows[0]
        problem = json.loads(first["problem"])
        scores, why = _scores(by, configs, times, problem, ceilings.get(first["fingerprint"]))
        if why:
            timed.setdefault(why, []).append(str(first["device"]))
        fraction = np.nan_to_num(np.nanmin(scores) / scores)  # unscored: 0, as a failure
        at = space.indices(configs)
        best = np.zeros(len(space))
        np.maximum.at(best, at[at >= 0], fraction[at >= 0])
        total += best
    ranked = tuple(TimeRanked(tuple(dict.fromkeys(d)), why) for why, d in timed.items())
    return total, len(sets), ranked


def _scores(
    by: PriorObjective,
    configs: list[dict[str, Any]],
    times: np.ndarray,
    problem: Mapping[str, Any],
    ceilings: Any,
) -> tuple[np.ndarray, str]:
    """One set's scores by the objective (lower is better; NaN: cannot be ranked), computed
    with the set's own problem values (never this run's: the times are that problem's); the
    times and why instead where no result of the set can be scored."""
    scoring = ResultMetrics.of({**by.description, "problem": {}}, problem, ceilings)
    scores = np.array(
        [by.goal.score_of(c, float(t), scoring) for c, t in zip(configs, times, strict=True)],
        dtype=np.float64,  # None -> NaN
    )
    if not np.isnan(scores).all():
        return scores, ""
    return times, _why_unscored(by, problem, ceilings)


def _why_unscored(by: PriorObjective, problem: Mapping[str, Any], ceilings: Any) -> str:
    name = by.goal.name
    if name in (ROOFLINE, ROOFLINE_SAME_BYTES) and ceilings is None:
        return f"{name} needs the device's ceilings: none were measured on it"
    missing = [n for n in by.description.get("problem", {}) if n not in problem]
    if missing:
        return f"{name} needs problem values their problem lacks: {', '.join(missing)}"
    return f"{name} is not a positive number for any of them"


def time_ranked_note(goal: Objective, ranked: tuple[TimeRanked, ...]) -> str:
    """One line naming the other devices' results a prior ranked by time, not by ``goal``
    ('' for none)."""
    if not ranked:
        return ""
    return (
        f"the prior ranked other devices' results by time, not by {goal.name}, where "
        f"{goal.name} cannot be computed from them: " + "; ".join(r.text() for r in ranked)
    )
