"""Trustworthy winners: after a campaign, re-time its best few configurations side by side.

The search times each configuration once, at whatever moment it came up; on a busy machine
another process may have slowed one of them, and the "best" is then an accident. So the top
candidates are timed again in rounds, in a fresh random order each round (interleaved, so a
slow spell hits them all alike), their new samples pooled with the old, until the winner's
95% interval of the median lies below every other candidate's or the time limit is spent.
Candidates whose interval still overlaps the winner's cannot be told apart, and are named.
When the candidates re-time slower than the search timed them (a busy spell), every other
configuration whose stored score now beats the winner's joins them before anything is
concluded: otherwise the campaign's best (by stored median) would be one that confirmation
never looked at. If the time limit ends first, the confirmation is not conclusive and names
those configurations (``unconfirmed``).
With an objective other than time (``--objective``), candidates and winner are chosen by its
score at the pooled median (``Objective.score_of``, as the search and the best rank), and the
intervals compared are the score's at the ends of each time interval.
The new samples are added to the stored results (``perfport.store.add_samples``): more
samples of the same configurations, never new configurations.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from perfport._core import Config, Measurement
from perfport._core.metrics import Objective, ResultMetrics
from perfport._core.stats import MIN_CI_SAMPLES, summarize
from perfport.store import Campaign, Store, add_samples

DEFAULT_TOP = 3
DEFAULT_SECONDS = 5.0  # of re-timing, after a campaign that may have taken minutes


@dataclass(frozen=True)
class Candidate:
    """One re-timed configuration: the median and its 95% interval over all its samples; and
    the objective's score (lower is better, inf: cannot be ranked) at the median and at the
    interval's ends (None: the objective is the time, so the median and interval)."""

    config: Config
    median_ms: float
    interval_ms: tuple[float, float]
    n: int
    score: float | None = None
    score_interval: tuple[float, float] | None = None

    @property
    def rank(self) -> float:
        return self.median_ms if self.score is None else self.score

    @property
    def rank_interval(self) -> tuple[float, float]:
        return self.interval_ms if self.score_interval is None else self.score_interval

    def to_json(self) -> dict[str, Any]:
        return {"config": dict(self.config), "median_ms": self.median_ms,
                "interval_ms": list(self.interval_ms), "n": self.n}  # fmt: skip


@dataclass(frozen=True)
class Confirmation:
    """The outcome of re-timing: the candidates ranked by the objective's score at their
    median (by median for time), best first."""

    candidates: tuple[Candidate, ...]
    rounds: int
    seconds: float
    dropped: tuple[Config, ...] = ()  # failed when timed again (flaky): no longer candidates
    objective: Objective = field(default_factory=Objective)
    # Not re-timed (the time ran out) though their stored score beats the winner's, best first
    unconfirmed: tuple[Candidate, ...] = ()

    @property
    def conclusive(self) -> bool:
        """Whether every configuration that may beat the winner was re-timed."""
        return not self.unconfirmed

    @property
    def winner(self) -> Candidate:
        return self.candidates[0]

    @property
    def indistinguishable(self) -> tuple[Candidate, ...]:
        """The other candidates whose interval overlaps the winner's."""
        high = self.winner.rank_interval[1]
        return tuple(c for c in self.candidates[1:] if c.rank_interval[0] <= high)

    @property
    def too_few(self) -> bool:
        """Whether a candidate has too few samples for a 95% interval of its median."""
        return any(c.n < MIN_CI_SAMPLES for c in self.candidates)

    @property
    def separated(self) -> bool:
        return not self.indistinguishable and not self.too_few

    def value(self, c: Candidate) -> float | None:
        """A candidate's objective value at its median: its time, or the metric."""
        return self.objective.value(c.rank) if math.isfinite(c.rank) else None

    def to_json(self) -> dict[str, Any]:
        def candidate(c: Candidate) -> dict[str, Any]:
            return {**c.to_json(), "value": self.value(c)}

        return {
            "objective": str(self.objective),
            "value": self.value(self.winner),
            "winner": dict(self.winner.config),
            "median_ms": self.winner.median_ms,
            "interval_ms": list(self.winner.interval_ms),
            "indistinguishable": [candidate(c) for c in self.indistinguishable],
            "separated": self.separated,
            "candidates": [candidate(c) for c in self.candidates],
            "rounds": self.rounds,
            "seconds": round(self.seconds, 3),
            "dropped": [dict(c) for c in self.dropped],
            "conclusive": self.conclusive,
            "unconfirmed": [candidate(c) for c in self.unconfirmed],
        }


def confirm(
    measurements: Sequence[Measurement],
    measure: Callable[[Config], Measurement],
    keep: Callable[[Config, Sequence[float]], object],
    top: int = DEFAULT_TOP,
    max_seconds: float = DEFAULT_SECONDS,
    seed: int = 0,
    objective: Objective | None = None,
    scoring: ResultMetrics | None = None,
) -> Confirmation | None:
    """Re-time the ``top`` best correct configurations of ``measurements`` by ``objective``
    (the fastest by default; a metric's values come from ``scoring``), as the module docstring
    says: ``measure`` times one again, ``keep`` stores its new samples. At least one round
    runs; None when fewer than two configurations can be ranked (nothing to compare)."""
    goal = objective or Objective()
    rank = _Ranking(goal, scoring)
    rankable = [m for m in measurements if m.ok and rank.stored(m) < math.inf]
    ranked = sorted(rankable, key=rank.stored)
    if len(ranked) < 2:
        return None
    samples = {m.config: list(m.times_ms) for m in ranked[:top]}
    waiting = ranked[top:]  # by stored score: those that beat the winner join
    rng, started, rounds, dropped = random.Random(seed), time.monotonic(), 0, []
    while len(samples) >= 2:
        if rounds:
            leading = _leading(waiting, rank, samples)
            if not leading and _separate(rank.candidates(samples)):
                break
            if time.monotonic() - started >= max_seconds:
                break
            # The candidates timed slower than before (a busy spell): all that now lead by
            # their stored score are timed too, or the winner would be stale.
            for joining in leading:
                waiting.remove(joining)
                samples[joining.config] = list(joining.times_ms)
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
    elapsed = time.monotonic() - started
    unconfirmed = rank.candidates(
        {m.config: list(m.times_ms) for m in _leading(waiting, rank, samples)}
    )
    return Confirmation(
        rank.candidates(samples), rounds, elapsed, tuple(dropped), goal, unconfirmed
    )


class Measures(Protocol):
    """What re-times: a local ``Runner``, or a session's measurer on another device or host."""

    def measure(self, config: Config) -> Measurement: ...


def confirm_campaign(
    store: Store,
    campaign: Campaign,
    runner: Measures,
    top: int,
    max_seconds: float,
    seed: int,
    objective: Objective | None = None,
    scoring: ResultMetrics | None = None,
) -> Confirmation | None:
    """``confirm`` the campaign's stored results with ``runner``, storing the new samples."""
    return confirm(
        store.measurements(campaign),
        runner.measure,
        lambda config, times: add_samples(store, campaign, config, times),
        top,
        max_seconds,
        seed,
        objective,
        scoring,
    )


@dataclass(frozen=True)
class _Ranking:
    """Scores by the objective (lower is better; inf: cannot be ranked), from a median."""

    objective: Objective
    scoring: ResultMetrics | None

    def score(self, config: Config, time_ms: float | None) -> float:
        s = self.objective.score_of(config, time_ms, self.scoring)
        return math.inf if s is None else s

    def stored(self, m: Measurement) -> float:
        return self.score(m.config, m.time_ms)

    def candidates(self, samples: dict[Config, list[float]]) -> tuple[Candidate, ...]:
        """The candidates, best first; a metric's interval is its score at the time interval's
        ends (a metric falls or rises with the time: either end may be its low one)."""
        out = []
        for config, times in samples.items():
            s = summarize(times)
            if self.objective.is_time:
                out.append(Candidate(config, s.median, (s.ci_low, s.ci_high), s.n))
                continue
            ends = sorted((self.score(config, s.ci_low), self.score(config, s.ci_high)))
            out.append(Candidate(config, s.median, (s.ci_low, s.ci_high), s.n,
                                 self.score(config, s.median), (ends[0], ends[1])))  # fmt: skip
        return tuple(sorted(out, key=lambda c: c.rank))


def _leading(
    waiting: Sequence[Measurement], rank: _Ranking, samples: dict[Config, list[float]]
) -> list[Measurement]:
    """The waiting configurations whose stored score beats the candidates' current winner."""
    best = rank.candidates(samples)[0].rank
    return [m for m in waiting if rank.stored(m) < best]


def _separate(ranked: tuple[Candidate, ...]) -> bool:
    # Fewer samples than MIN_CI_SAMPLES give no 95% interval: time them again first.
    return all(c.n >= MIN_CI_SAMPLES for c in ranked) and all(
        c.rank_interval[0] > ranked[0].rank_interval[1] for c in ranked[1:]
    )
