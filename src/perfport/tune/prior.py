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

from perfport._core import Problem, value_key
from perfport.space import Space
from perfport.store import Store, transfer_summary
from perfport.store.described import CAMPAIGN_SPEC
from perfport.tune.prior_objective import PriorObjective, TimeRanked, objective_fractions


@dataclass(frozen=True)
class Prior:
    """Scores for a space's legal configurations (higher is more promising), and how many
    other (device, problem) result sets they come from."""

    scores: np.ndarray
    sources: int
    by_time: tuple[TimeRanked, ...] = ()  # sources a metric objective could not rank


@dataclass(frozen=True)
class SkippedSource:
    """Another device's results that the prior left out: the stored kernel they belong to,
    its devices, and why (a one-line reason naming what would make them fit)."""

    kernel: str
    devices: tuple[str, ...]
    why: str

    def text(self) -> str:
        return f"{self.kernel} on {', '.join(self.devices)} ({self.why})"

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "devices": list(self.devices), "why": self.why}


@dataclass(frozen=True)
class _Stored:
    """A stored kernel with results on other devices, as the prior sees it."""

    id: int
    name: str
    source_hash: str
    imported: bool
    params: dict[str, list[Any] | None]  # name -> its values (None: not recorded)
    devices: tuple[str, ...]


# Every kernel with results on a device but the one searched (a store holds few kernels), with
# the descriptions its campaigns there ran with (a spec edited under its source and name is
# the same kernel row, whose own description is the first stored).
_OTHERS = f"""
SELECT DISTINCT k.id, k.name, k.source_hash, k.language, {CAMPAIGN_SPEC} AS spec, d.name AS device
FROM kernels k JOIN campaigns g ON g.kernel_id = k.id JOIN devices d ON d.id = g.device_id
WHERE d.fingerprint != ? ORDER BY k.id, d.name
"""


def _stored(store: Store, device_fingerprint: str) -> list[_Stored]:
    """The kernels of ``_OTHERS``, each with the parameters its campaigns declared: the
    values of any of them (None where one did not record them)."""
    rows = store.query(_OTHERS, (device_fingerprint,))
    devices: dict[int, dict[str, None]] = {}
    params: dict[int, dict[str, list[Any] | None]] = {}
    for r in rows:
        devices.setdefault(int(r["id"]), {})[str(r["device"])] = None
        declared = params.setdefault(int(r["id"]), {})
        for p in json.loads(r["spec"]).get("params", []):
            name, values = str(p["name"]), p.get("values")
            known = declared.get(name, [])
            if known is None or values is None:
                declared[name] = None
            else:
                declared[name] = [*known, *(v for v in values if v not in known)]
    out: dict[int, _Stored] = {}
    for r in rows:
        out[int(r["id"])] = _Stored(
            int(r["id"]), str(r["name"]), str(r["source_hash"]), r["language"] == "external",
            params[int(r["id"])], tuple(devices[int(r["id"])]),
        )  # fmt: skip
    return list(out.values())


def _named(kernel: str, stored: _Stored) -> bool:
    """The store's kernel match (``--kernel``): by name, or by a prefix of the source hash."""
    return stored.name == kernel or stored.source_hash.lower().startswith(kernel.lower())


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _misfit(stored: _Stored, space: Space) -> str:
    """Why ``stored``'s configurations cannot stand for ``space``'s ('' where they can): it
    must have every parameter of the space, with at least one value in common each; a
    parameter the space lacks must take one value there (use_cmem, filter_width in the
    benchmark hub's convolution caches), so dropping it leaves one configuration per
    configuration. A fixed parameter that is a problem value here (filter_width) makes the
    stored results another problem's, which the prior uses as it uses any other problem's."""
    ours = {p.name: {value_key(v) for v in p.values} for p in space.params}
    why = []
    missing = [n for n in ours if n not in stored.params]
    if missing:
        why.append(f"it has no {', '.join(missing)}")
    varying = [
        f"{n} over {'unrecorded' if v is None else len(v)} values"
        for n, v in stored.params.items()
        if n not in ours and (v is None or len(v) != 1)
    ]
    if varying:
        why.append(f"it also tunes {', '.join(varying)}")
    apart = [
        n
        for n, v in stored.params.items()
        if n in ours and v is not None and not {value_key(_frozen(x)) for x in v} & ours[n]
    ]
    if apart:
        why.append(f"none of its values of {', '.join(apart)} are this kernel's")
    return "; ".join(why)


def _could_be(stored: _Stored, space: Space, measured: set[str]) -> bool:
    """Whether an import under another name may be this kernel's results, worth the hint to
    import it again under this name: every value it tunes is one of this kernel's (_misfit
    asked for one in common only), and its name is not that of a kernel perfport measured
    (``measured``): an import named after one, an export of it brought back, is its results,
    though two kernels tuning the same work-group sizes look alike."""
    ours = {p.name: {value_key(v) for v in p.values} for p in space.params}
    values_ours = all(
        v is None or {value_key(_frozen(x)) for x in v} <= ours[n]
        for n, v in stored.params.items()
        if n in ours
    )
    return values_ours and stored.name not in measured


def _measured_names(store: Store) -> set[str]:
    """The names of the kernels perfport measured in this store (not imported)."""
    rows = store.query("SELECT DISTINCT name FROM kernels WHERE language != 'external'")
    return {str(r[0]) for r in rows}


def _sources(
    store: Store, kernel: str, space: Space, device_fingerprint: str
) -> tuple[list[_Stored], list[SkippedSource]]:
    """The kernels of that name whose results can seed ``space``'s search, and those left
    out: of that name but another space, or imported under another name that may be this
    kernel's (``_could_be``; unless its devices' results are in under this name too: imported
    again, as told)."""
    stored = _stored(store, device_fingerprint)
    measured = _measured_names(store)
    misfit = {s.id: _misfit(s, space) for s in stored}
    used = [s for s in stored if _named(kernel, s) and not misfit[s.id]]
    covered = {d for s in used for d in s.devices}
    skipped = [SkippedSource(s.name, s.devices, misfit[s.id]) for s in stored
               if _named(kernel, s) and misfit[s.id]]  # fmt: skip
    skipped += [
        SkippedSource(
            s.name, s.devices,
            f"imported as {s.name!r}, not {kernel!r}: import it again with --kernel-name {kernel}",
        )
        for s in stored
        if s.imported and not _named(kernel, s) and not misfit[s.id]
        and _could_be(s, space, measured) and not set(s.devices) <= covered
    ]  # fmt: skip
    return used, skipped


def transfer_prior(
    store: Store,
    kernel: str,
    space: Space,
    device_fingerprint: str,
    problem: Mapping[str, Any] | None = None,
) -> Prior | None:
    """Each legal configuration's mean fraction of the optimum over the other devices' results
    of ``kernel`` in the store (the same parameters, but for any fixed at one value there:
    ``_misfit``): 1.0 where it was the best everywhere,
    counting 0 where it failed or was not measured; NaN where it never ran. Results for
    ``problem`` are used when any other device has them, else those of every problem. None
    when no other device has results.

    The store sums the fractions per configuration in SQL (``transfer_summary``), so building
    the prior reads one row per distinct configuration, never every result: with 1.15M results
    it took 3.5 s and no added memory on a loaded 2-core machine, where reading every result
    took 262 s and 3 GB (``benchmarks/prior_scale.py``); only where one device's results
    hold several kernels fixing a parameter at other values is a row per configuration and
    device read (``_fractions``). A device's
    optimum is its best over all its configurations, including any that are illegal here."""
    return sourced_prior(store, kernel, space, device_fingerprint, problem)[0]


def sourced_prior(
    store: Store,
    kernel: str,
    space: Space,
    device_fingerprint: str,
    problem: Mapping[str, Any] | None = None,
    by: PriorObjective | None = None,
) -> tuple[Prior | None, tuple[SkippedSource, ...]]:
    """``transfer_prior``, and the other devices' results it left out with why: what to say
    where a search starts from fewer sources than the store seems to hold. ``by`` a metric
    objective: the fractions are of each set's best by it (``prior_objective``)."""
    used, skipped = _sources(store, kernel, space, device_fingerprint)
    if not used:
        return None, tuple(skipped)
    problem_key = Problem.of(dict(problem or {})).key
    if by is not None and not by.goal.is_time:
        prior = _by_objective(store, space, device_fingerprint, used, problem_key, by)
        return prior, tuple(skipped)
    total, sources = _fractions(store, space, device_fingerprint, used, problem_key)
    if not sources:
        total, sources = _fractions(store, space, device_fingerprint, used, None)
    if not sources:
        return None, tuple(skipped)
    return Prior(np.where(total > 0, total / sources, np.nan), sources), tuple(skipped)


def _by_objective(
    store: Store,
    space: Space,
    device_fingerprint: str,
    used: list[_Stored],
    problem_key: str,
    by: PriorObjective,
) -> Prior | None:
    """``sourced_prior``'s prior by a metric objective: the same sets (the problem's where
    any other device has it, else every problem's), each read per configuration."""
    ids = [s.id for s in used]
    total, sources, timed = objective_fractions(
        store, space, device_fingerprint, ids, problem_key, by
    )
    if not sources:
        total, sources, timed = objective_fractions(store, space, device_fingerprint, ids, None, by)
    if not sources:
        return None
    return Prior(np.where(total > 0, total / sources, np.nan), sources, timed)


def _fractions(
    store: Store,
    space: Space,
    device_fingerprint: str,
    used: list[_Stored],
    problem_key: str | None,
) -> tuple[np.ndarray, int]:
    """Per legal configuration, the sum over the (device, problem) result sets of its fraction
    of the set's optimum, and how many sets there are. The store sums them per stored
    configuration; a stored configuration's fixed parameters are not the space's (indices
    ignores them), so kernels fixing them at other values map several onto one of ours.
    Where those are on different devices, each set still counts once and the sums add up;
    where one set holds several such kernels (two imports of one device's cache, use_cmem at 0
    and at 1), the sum would count the set once per kernel (scores past 1): those sets are
    read per configuration instead, each counting its best (``_best_per_set``)."""
    ids = [s.id for s in used]
    if _shared_sets(store, used, space, device_fingerprint):
        return _best_per_set(store, ids, space, device_fingerprint, problem_key)
    summary = transfer_summary(store, ids, device_fingerprint, problem_key)
    total = np.zeros(len(space))
    at = space.indices([json.loads(key) for key in summary.fractions])
    fractions = np.fromiter(summary.fractions.values(), dtype=np.float64, count=len(at))
    np.add.at(total, at[at >= 0], fractions[at >= 0])
    return total, summary.sources


# Each (device, problem) result set of the kernels given, on devices but the one searched,
# with the kernels it holds.
_SETS = """
SELECT DISTINCT g.device_id, g.problem_id, g.kernel_id FROM campaigns g
WHERE g.kernel_id IN ({kernels}) AND g.device_id NOT IN
      (SELECT id FROM devices WHERE fingerprint = ?)
"""


def _shared_sets(store: Store, used: list[_Stored], space: Space, device_fingerprint: str) -> bool:
    """Whether any result set holds several kernels of which one fixes parameters the space
    lacks: the sets whose stored configurations can meet on one of ours. (Kernels with
    exactly the space's parameters share configurations in the store, which takes each at
    its best time over them already.)"""
    fixing = {s.id for s in used if any(n not in space.names for n in s.params)}
    if not fixing:
        return False
    query = _SETS.format(kernels=",".join("?" * len(used)))
    kernels: dict[tuple[int, int], set[int]] = {}
    for r in store.query(query, (*[s.id for s in used], device_fingerprint)):
        kernels.setdefault((int(r[0]), int(r[1])), set()).add(int(r[2]))
    return any(len(k) > 1 and k & fixing for k in kernels.values())


# Each configuration's best ok time per (device, problem) result set: a row per configuration
# and set, so only for sets the store's sums would count twice (_fractions).
_PER_SET = """
SELECT g.device_id, g.problem_id, c.key AS config, MIN(r.median_ms) AS t
FROM campaigns g JOIN problems p ON p.id = g.problem_id
JOIN results r ON r.campaign_id = g.id JOIN configs c ON c.id = r.config_id
WHERE g.kernel_id IN ({kernels}) AND g.device_id NOT IN
      (SELECT id FROM devices WHERE fingerprint = ?) {problem}
  AND r.outcome = 'ok' AND r.median_ms > 0
GROUP BY g.device_id, g.problem_id, r.config_id
"""


def _best_per_set(
    store: Store, ids: list[int], space: Space, device_fingerprint: str, problem_key: str | None
) -> tuple[np.ndarray, int]:
    """``_fractions`` with each set counted at most once per configuration of ours: at the
    best of the stored configurations that map onto it (the set's optimum over all of them,
    illegal here included, over that one's time)."""
    where = {"kernels": ",".join("?" * len(ids)), "problem": ""}
    params: tuple[Any, ...] = (*ids, device_fingerprint)
    if problem_key is not None:
        where["problem"], params = "AND p.key = ?", (*params, problem_key)
    rows = store.query(_PER_SET.format(**where), params)
    total = np.zeros(len(space))
    if not rows:
        return total, 0
    _, of_set = np.unique([(r[0], r[1]) for r in rows], axis=0, return_inverse=True)
    of_set = of_set.ravel()
    times = np.array([r["t"] for r in rows], dtype=np.float64)
    optimum = np.full(of_set.max() + 1, np.inf)
    np.minimum.at(optimum, of_set, times)
    fraction = optimum[of_set] / times
    at = space.indices([json.loads(r["config"]) for r in rows])
    for one in range(len(optimum)):
        mine = (of_set == one) & (at >= 0)
        best = np.zeros(len(space))
        np.maximum.at(best, at[mine], fraction[mine])
        total += best
    return total, len(optimum)


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


def skipped_note(skipped: tuple[SkippedSource, ...]) -> str:
    """One line naming the other devices' results a prior left out, and why ('' for none)."""
    if not skipped:
        return ""
    return "the prior left out other devices' results of " + "; ".join(s.text() for s in skipped)
