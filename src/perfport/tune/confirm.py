"""Trustworthy winners: after a campaign, re-time its best few configurations side by side.

The search times each configuration once, at whatever moment it came up; on a busy machine
another process may have slowed one of them, and the "best" is then an accident. So the top
candidates are timed again in rounds, in a fresh random order each round (interleaved, so a
slow spell hits them all alike), their new samples pooled with the old, until the winner's
95% interval of the median lies below every other candidate's or the time limit is spent.
Candidates whose interval still overlaps the winner's cannot be told apart, and are named.
The new samples are added to the stored results (``perfport.store.add_samples``): more
samples of the same configurations, never new configurations.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Config, Measurement
from perfport._core.stats import summarize
from perfport.measure import Runner
from perfport.store import Campaign, Store, add_samples

DEFAULT_TOP = 3
DEFAULT_SECONDS = 5.0  # of re-timing, after a campaign that may have taken minutes


@dataclass(frozen=True)
class Candidate:
    """One re-timed configuration: the median and its 95% interval over all its samples."""

    config: Config
    median_ms: float
    interval_ms: tuple[float, float]
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"config": dict(self.config), "median_ms": self.median_ms,
                "interval_ms": list(self.interval_ms), "n": self.n}  # fmt: skip


@dataclass(frozen=True)
class Confirmation:
    """The outcome of re-timing: the candidates ranked by median, best first."""

    candidates: tuple[Candidate, ...]
    rounds: int
    seconds: float
    dropped: tuple[Config, ...] = ()  # failed when timed again (flaky): no longer candidates

    @property
    def winner(self) -> Candidate:
        return self.candidates[0]

    @property
    def indistinguishable(self) -> tuple[Candidate, ...]:
        """The other candidates whose interval overlaps the winner's."""
        high = self.winner.interval_ms[1]
        return tuple(c for c in self.candidates[1:] if c.interval_ms[0] <= high)

    @property
    def separated(self) -> bool:
        return not self.indistinguishable

    def to_json(self) -> dict[str, Any]:
        return {
            "winner": dict(self.winner.config),
            "median_ms": self.winner.median_ms,
            "interval_ms": list(self.winner.interval_ms),
            "indistinguishable": [c.to_json() for c in self.indistinguishable],
            "separated": self.separated,
            "candidates": [c.to_json() for c in self.candidates],
            "rounds": self.rounds,
            "seconds": round(self.seconds, 3),
            "dropped": [dict(c) for c in self.dropped],
        }


def confirm(
    measurements: Sequence[Measurement],
    measure: Callable[[Config], Measurement],
    keep: Callable[[Config, Sequence[float]], object],
    top: int = DEFAULT_TOP,
    max_seconds: float = DEFAULT_SECONDS,
    seed: int = 0,
) -> Confirmation | None:
    """Re-time the ``top`` fastest correct configurations of ``measurements`` (module
    docstring): ``measure`` times one again, ``keep`` stores its new samples. At least one
    round runs; None when fewer than two configurations are correct (nothing to compare)."""
    ranked = sorted((m for m in measurements if m.ok), key=lambda m: m.time_ms or 0.0)
    if len(ranked) < 2:
        return None
    samples = {m.config: list(m.times_ms) for m in ranked[:top]}
    waiting = ranked[top:]  # by stored median: the next one joins when it leads
    rng, started, rounds, dropped = random.Random(seed), time.monotonic(), 0, []
    while len(samples) >= 2:
        if rounds:
            if time.monotonic() - started >= max_seconds:
                break
            if waiting and (waiting[0].time_ms or 0.0) < _ranked(samples)[0].median_ms:
                # The candidates timed slower than before (a busy spell): the next one by its
                # stored median now leads, so it is timed too, or the winner would be stale.
                joining = waiting.pop(0)
                samples[joining.config] = list(joining.times_ms)
            elif _separate(samples):
                break
        order = list(samples)
        rng.shuffle(order)
        for config in order:
            m = measure(config)
            if m.ok:
                samples[config] += m.times_ms
                keep(config, m.times_ms)
            else:
                dropped.append(config)
                del samples[config]
        rounds += 1
    if not samples:  # every candidate failed when timed again
        return None
    return Confirmation(_ranked(samples), rounds, time.monotonic() - started, tuple(dropped))


def confirm_campaign(
    store: Store, campaign: Campaign, runner: Runner, top: int, max_seconds: float, seed: int
) -> Confirmation | None:
    """``confirm`` the campaign's stored results with ``runner``, storing the new samples."""
    return confirm(
        store.measurements(campaign),
        runner.measure,
        lambda config, times: add_samples(store, campaign, config, times),
        top,
        max_seconds,
        seed,
    )


def _ranked(samples: dict[Config, list[float]]) -> tuple[Candidate, ...]:
    out = []
    for config, times in samples.items():
        s = summarize(times)
        out.append(Candidate(config, s.median, (s.ci_low, s.ci_high), s.n))
    return tuple(sorted(out, key=lambda c: c.median_ms))


def _separate(samples: dict[Config, list[float]]) -> bool:
    ranked = _ranked(samples)
    return all(c.interval_ms[0] > ranked[0].interval_ms[1] for c in ranked[1:])
