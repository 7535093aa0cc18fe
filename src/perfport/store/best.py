"""The best configuration of every (device, kernel, problem), aggregated by SQLite: a million
stored results never become a million Python objects.

A target measured by one campaign (the usual case) has one result per configuration, so its
outcome counts and its best come from the index on (campaign, outcome, time) alone. Only
targets of several campaigns group by configuration first (a configuration's outcome is
``wrong_result`` if any of its results is: an unverified ``ok`` beside it proves nothing; else
``ok`` if any of its results is, else that of its latest result). The best's check is its
configuration's strongest, over every campaign of the target, as ``unverified`` counts it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from perfport._core import Check, Config, Outcome, Problem
from perfport._core.metrics import Ceilings
from perfport.store.ceilings import stored_ceilings
from perfport.store.described import CAMPAIGN_SPEC
from perfport.store.queries import BestResult, _metrics, _scoring, _where
from perfport.store.scenarios import REPORTED
from perfport.store.store import CampaignStatus, Store

_OK = "r.outcome = 'ok' AND r.median_ms IS NOT NULL"
# A campaign that stopped otherwise (running, or killed while it ran; interrupted; failed) has
# a best of only what it measured before it stopped: results says so.
_FINISHED = (CampaignStatus.COMPLETE.value, CampaignStatus.BUDGET.value)

# Each campaign with results, and whether it is a daemon's record of the refusals its clients
# report (strategy REPORTED): that one stays running for good, being a record and never a
# search, so it never makes a target's best partial.
_TARGETS = """
SELECT g.id, g.device_id, g.kernel_id, g.problem_id, g.status, g.strategy = '{reported}'
FROM campaigns g JOIN devices d ON d.id = g.device_id JOIN kernels k ON k.id = g.kernel_id
{where} {conj} EXISTS (SELECT 1 FROM results r WHERE r.campaign_id = g.id)
"""

# Read from the index results_by_campaign_outcome alone, in its order: no sort.
_ONE_CAMPAIGN = f"""
SELECT r.campaign_id AS campaign, r.outcome, COUNT(*) AS n,
       SUM({_OK} AND r.verification = 'unverified') AS unverified
FROM results r WHERE r.campaign_id IN ({{ids}}) GROUP BY r.campaign_id, r.outcome
"""

_BEST_OF_CAMPAIGN = f"""
SELECT r.config_id FROM results r WHERE r.campaign_id = ? AND {_OK}
ORDER BY r.median_ms, r.id LIMIT 1
"""

# Targets of several campaigns: one row per configuration first. Ties between equal medians go
# to the configuration whose first ok result was stored first.
_MANY_CAMPAIGNS = f"""
WITH per AS MATERIALIZED (
  SELECT g.device_id AS dev, g.kernel_id AS ker, g.problem_id AS prob, r.config_id AS cfg,
         MIN(CASE WHEN {_OK} THEN r.median_ms END) AS best,
         MIN(CASE WHEN {_OK} THEN r.id END) AS first_ok,
         MAX(r.outcome = 'ok') AS any_ok, MAX(r.outcome = 'wrong_result') AS any_wrong,
         MAX(r.id) AS last_id,
         MAX({_OK} AND r.verification = 'unverified') AS any_unverified,
         MAX({_OK} AND IFNULL(r.verification, '') <> 'unverified') AS any_verified
  FROM results r JOIN campaigns g ON g.id = r.campaign_id
  WHERE r.campaign_id IN ({{ids}})
  GROUP BY g.device_id, g.kernel_id, g.problem_id, r.config_id
),
ranked AS (
  SELECT dev, ker, prob, cfg,
         ROW_NUMBER() OVER (PARTITION BY dev, ker, prob ORDER BY best, first_ok) AS rank
  FROM per WHERE best IS NOT NULL AND NOT any_wrong
),
winner AS MATERIALIZED (SELECT dev, ker, prob, cfg FROM ranked WHERE rank = 1)
SELECT per.dev, per.ker, per.prob,
       CASE WHEN per.any_wrong THEN 'wrong_result' WHEN per.any_ok THEN 'ok'
            ELSE (SELECT outcome FROM results WHERE id = per.last_id) END AS outcome,
       COUNT(*) AS n,
       SUM(per.any_unverified AND NOT per.any_verified AND NOT per.any_wrong) AS unverified,
       MAX(w.cfg) AS best_cfg
FROM per LEFT JOIN winner w ON w.dev = per.dev AND w.ker = per.ker AND w.prob = per.prob
GROUP BY per.dev, per.ker, per.prob, outcome
"""

# The target's description is its newest campaign's (with results): a spec edited under the
# same source and name (another default, other values) is the same kernel, and its campaigns
# keep each their own description (described.py).
_TARGET_INFO = f"""
SELECT d.name AS device, d.backend, d.fingerprint AS device_fingerprint, k.name AS kernel,
       k.source_hash AS kernel_hash, (SELECT {CAMPAIGN_SPEC} FROM campaigns g WHERE g.device_id = d.id AND g.kernel_id = k.id
        AND g.problem_id = p.id AND EXISTS (SELECT 1 FROM results r WHERE r.campaign_id = g.id)
        ORDER BY g.id DESC LIMIT 1) AS spec,
       p.key AS problem
FROM devices d, kernels k, problems p WHERE d.id = ? AND k.id = ? AND p.id = ?
"""

# The best (first-stored on ties) ok result of one configuration of one target.
_BEST_OF_CONFIG = f"""
SELECT c.key, r.median_ms, r.verification, r.verified_against, g.status AS campaign_status
FROM results r JOIN campaigns g ON g.id = r.campaign_id JOIN configs c ON c.id = r.config_id
WHERE r.config_id = ? AND g.device_id = ? AND g.kernel_id = ? AND g.problem_id = ? AND {_OK}
ORDER BY r.median_ms, r.id LIMIT 1
"""

# What one configuration of one target was checked against: the strongest check of its ok
# results, so that a configuration verified by one campaign is verified where a --no-verify
# campaign timed it fastest (as ``unverified`` counts it); unknown (before schema 3) beats
# unverified, as ``unverified`` does not count it either.
_CHECK_OF_CONFIG = f"""
SELECT r.verification, r.verified_against
FROM results r JOIN campaigns g ON g.id = r.campaign_id
WHERE r.config_id = ? AND g.device_id = ? AND g.kernel_id = ? AND g.problem_id = ? AND {_OK}
ORDER BY CASE r.verification WHEN 'verified' THEN 0 WHEN 'reference' THEN 1
         WHEN 'unverified' THEN 3 ELSE 2 END, r.median_ms, r.id
LIMIT 1
"""

Target = tuple[int, int, int]  # device_id, kernel_id, problem_id


def best_results(
    store: Store, kernel: str | None = None, device: str | None = None
) -> list[BestResult]:
    """Best configuration per device, kernel and problem, with its speedup over the kernel's
    default configuration and the outcome counts.

    >>> import perfport
    >>> for r in perfport.results("perfport.db"):  # doctest: +SKIP
    ...     print(r.kernel, r.best, r.best_ms, r.speedup)
    """
    where, params = _where(kernel, device)
    campaigns: dict[Target, list[int]] = {}
    statuses: dict[Target, Counter[str]] = {}
    searches: dict[Target, list[str]] = {}  # the statuses of those that are not REPORTED
    conj = "AND" if where else "WHERE"
    for row in store.query(_TARGETS.format(where=where, conj=conj, reported=REPORTED), params):
        campaigns.setdefault((row[1], row[2], row[3]), []).append(row[0])
        statuses.setdefault((row[1], row[2], row[3]), Counter())[row[4]] += 1
        if not row[5]:
            searches.setdefault((row[1], row[2], row[3]), []).append(row[4])
    groups = _one_campaign(store, {t: c[0] for t, c in campaigns.items() if len(c) == 1})
    groups.update(_many_campaigns(store, [i for c in campaigns.values() if len(c) > 1 for i in c]))
    ceilings = stored_ceilings(store)
    out = [
        _best_result(store, t, groups[t], statuses[t], ceilings, searches.get(t, []))
        for t in campaigns
    ]
    return sorted(out, key=lambda r: (r.kernel, r.device, r.problem.key))


def _ids(ids: Iterable[int]) -> str:
    return ", ".join(str(int(i)) for i in ids)  # our own integer keys, never user text


def _one_campaign(store: Store, single: dict[Target, int]) -> dict[Target, dict[str, Any]]:
    if not single:
        return {}
    target_of = {c: t for t, c in single.items()}
    groups: dict[Target, dict[str, Any]] = {}
    for row in store.query(_ONE_CAMPAIGN.format(ids=_ids(single.values()))):
        target = target_of[row["campaign"]]
        group = groups.get(target)
        if group is None:
            best = store.query(_BEST_OF_CAMPAIGN, (row["campaign"],))
            group = groups[target] = {
                "counts": Counter(), "unverified": 0, "best_cfg": best[0][0] if best else None,
            }  # fmt: skip
        group["counts"][row["outcome"]] += row["n"]
        group["unverified"] += row["unverified"] or 0
    return groups


def _many_campaigns(store: Store, ids: list[int]) -> dict[Target, dict[str, Any]]:
    groups: dict[Target, dict[str, Any]] = {}
    if not ids:
        return groups
    for row in store.query(_MANY_CAMPAIGNS.format(ids=_ids(ids))):
        group = groups.setdefault(
            (row["dev"], row["ker"], row["prob"]),
            {"counts": Counter(), "unverified": 0, "best_cfg": row["best_cfg"]},
        )
        group["counts"][row["outcome"]] += row["n"]
        group["unverified"] += row["unverified"] or 0
    return groups


# A campaign of a list of configurations (tune --configs): the strategy it is stored with.
_LISTED = "listed"

# The configurations a list's campaign stored as pruned that no other campaign of the target
# stored: those outside the device's space, which a search never measures (one pruned once
# built that a partial search did not reach is taken for one too: off by one at worst).
_LISTED_PRUNED = f"""
SELECT COUNT(DISTINCT r.config_id) FROM results r JOIN campaigns g ON g.id = r.campaign_id
WHERE g.device_id = ? AND g.kernel_id = ? AND g.problem_id = ? AND g.strategy = '{_LISTED}'
  AND r.outcome = 'pruned' AND r.config_id NOT IN (
    SELECT r2.config_id FROM results r2 JOIN campaigns g2 ON g2.id = r2.campaign_id
    WHERE g2.device_id = ? AND g2.kernel_id = ? AND g2.problem_id = ?
      AND g2.strategy <> '{_LISTED}')
"""


def _pruned_before_building(store: Store, ids: Target) -> int:
    """Configurations the device's limits ruled out of the space, not stored as results: the
    space's count, of a campaign that searched it. A list's campaign stores its listed ones
    the device cannot run as pruned results (counted already), and the rest of its space was
    never asked about; where both kinds of campaign exist, those stored ones are among the
    space's count, so they are not counted twice."""
    rows = store.query(
        "SELECT g.space, g.strategy FROM campaigns g WHERE g.device_id = ? AND g.kernel_id = ? "
        "AND g.problem_id = ? AND EXISTS (SELECT 1 FROM results r WHERE r.campaign_id = g.id)",
        ids,
    )
    searched = [json.loads(r[0]).get("pruned", 0) for r in rows if r[1] != _LISTED]
    pruned = max(searched, default=0)
    if pruned and len(searched) < len(rows):
        pruned -= min(pruned, store.query(_LISTED_PRUNED, (*ids, *ids))[0][0])
    return int(pruned)


def _best_of(store: Store, config_id: int | None, ids: Target) -> Any:
    rows = store.query(_BEST_OF_CONFIG, (config_id, *ids)) if config_id is not None else []
    return rows[0] if rows else None


def _best_result(
    store: Store,
    ids: Target,
    group: dict[str, Any],
    statuses: Counter[str],
    ceilings: dict[str, Ceilings],
    searched: list[str],
) -> BestResult:
    """One target's record from its aggregated counts: a few indexed look-ups, not a scan."""
    info = store.query(_TARGET_INFO, ids)[0]
    spec = json.loads(info["spec"])
    counts: Counter[str] = group["counts"]
    pre_pruned = _pruned_before_building(store, ids)
    if pre_pruned:
        counts[Outcome.PRUNED.value] += pre_pruned
    default = Config.of(spec["default"]) if spec.get("default") is not None else None
    default_row = None
    if default is not None:
        found = store.query(
            "SELECT id FROM configs WHERE kernel_id = ? AND key = ?", (ids[1], default.key)
        )
        default_row = _best_of(store, found[0][0], ids) if found else None
    best = _best_of(store, group["best_cfg"], ids)
    checked = store.query(_CHECK_OF_CONFIG, (group["best_cfg"], *ids)) if best else []
    check = Check(checked[0][0]) if checked and checked[0][0] is not None else None
    return BestResult(
        device=info["device"],
        backend=info["backend"],
        device_fingerprint=info["device_fingerprint"],
        kernel=info["kernel"],
        kernel_hash=info["kernel_hash"],
        problem=Problem.of(json.loads(info["problem"])),
        best=Config.of(json.loads(best["key"])) if best is not None else None,
        best_ms=best["median_ms"] if best is not None else None,
        default=default,
        default_ms=default_row["median_ms"] if default_row is not None else None,
        outcomes=dict(sorted(counts.items())),
        campaigns=sum(statuses.values()),
        best_verification=check,
        best_verified_against=checked[0][1] if checked else None,
        unverified=group["unverified"],
        campaign_statuses=dict(sorted(statuses.items())),
        # The best's own campaign decides (a killed one beside the finished one that holds
        # the best does not make it partial); with no best, every campaign but REPORTED ones.
        finished=(
            best["campaign_status"] in _FINISHED
            if best is not None
            else all(s in _FINISHED for s in searched)
        ),
        best_metrics=_metrics(
            _scoring(info, ceilings),
            None if best is None else best["key"],
            None if best is None else best["median_ms"],
        ),
    )
