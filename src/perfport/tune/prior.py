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


@dataclass(frozen=True)
class Prior:
    """Scores for a space's legal configurations (higher is more promising), and how many
    other (device, problem) result sets they come from."""

    scores: np.ndarray
    sources: int


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


# Every kernel with results on a device but the one searched (a store holds few kernels).
_OTHERS = """
SELECT DISTINCT k.id, k.name, k.source_hash, k.language, k.spec, d.name AS device
FROM kernels k JOIN campaigns g ON g.kernel_id = k.id JOIN devices d ON d.id = g.device_id
WHERE d.fingerprint != ? ORDER BY k.id, d.name
"""


def _stored(store: Store, device_fingerprint: str) -> list[_Stored]:
    rows = store.query(_OTHERS, (device_fingerprint,))
    devices: dict[int, list[str]] = {}
    for r in rows:
        devices.setdefault(int(r["id"]), []).append(str(r["device"]))
    out: dict[int, _Stored] = {}
    for r in rows:
        spec = json.loads(r["spec"])
        params = {str(p["name"]): p.get("values") for p in spec.get("params", [])}
        out[int(r["id"])] = _Stored(
            int(r["id"]), str(r["name"]), str(r["source_hash"]), r["language"] == "external",
            params, tuple(devices[int(r["id"])]),
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


def _sources(
    store: Store, kernel: str, space: Space, device_fingerprint: str
) -> tuple[list[int], list[SkippedSource]]:
    """The kernels of that name whose results can seed ``space``'s search, and those left
    out: of that name but another space, or imported under another name with this space
    (unless its devices' results are in under this name too: imported again, as told)."""
    stored = _stored(store, device_fingerprint)
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
        and not set(s.devices) <= covered
    ]  # fmt: skip
    return [s.id for s in used], skipped


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
    took 262 s and 3 GB (``benchmarks/prior_scale.py``). A device's
    optimum is its best over all its configurations, including any that are illegal here."""
    return sourced_prior(store, kernel, space, device_fingerprint, problem)[0]


def sourced_prior(
    store: Store,
    kernel: str,
    space: Space,
    device_fingerprint: str,
    problem: Mapping[str, Any] | None = None,
) -> tuple[Prior | None, tuple[SkippedSource, ...]]:
    """``transfer_prior``, and the other devices' results it left out with why: what to say
    where a search starts from fewer sources than the store seems to hold."""
    ids, skipped = _sources(store, kernel, space, device_fingerprint)
    if not ids:
        return None, tuple(skipped)
    names = [p.name for p in space.params]
    problem_key = Problem.of(dict(problem or {})).key
    summary = transfer_summary(store, kernel, names, device_fingerprint, problem_key, ids)
    if not summary.sources:
        summary = transfer_summary(store, kernel, names, device_fingerprint, kernel_ids=ids)
    if not summary.sources:
        return None, tuple(skipped)
    total = np.zeros(len(space))
    # A stored configuration's fixed parameters are not the space's: indices ignores them.
    # Kernels fixing them at other values give one configuration twice: their fractions add.
    at = space.indices([json.loads(key) for key in summary.fractions])
    fractions = np.fromiter(summary.fractions.values(), dtype=np.float64, count=len(at))
    np.add.at(total, at[at >= 0], fractions[at >= 0])
    prior = Prior(np.where(total > 0, total / summary.sources, np.nan), summary.sources)
    return prior, tuple(skipped)


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
