"""What a tuning run returns."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from perfport._core import Check, DeviceInfo, Measurement, Outcome, PerfportError, Problem
from perfport._core.metrics import ROOFLINE, ROOFLINE_SAME_BYTES, Objective, ResultMetrics
from perfport.space import ConstraintSource, PruningReport
from perfport.store import CampaignStatus
from perfport.tune.confirm import Confirmation
from perfport.tune.prior import SkippedSource
from perfport.tune.prior_objective import TimeRanked


@dataclass(frozen=True)
class Budget:
    """When to stop: after ``max_evals`` configurations in the campaign (results of earlier
    sessions count), or after ``max_seconds`` of this session. None means no limit.
    ``fraction`` (0-1] is a share of the device's legal space (``--budget 25%``): ``tune``
    turns it into a count (rounded up, at least 1) once it knows the space."""

    max_evals: int | None = None
    max_seconds: float | None = None
    fraction: float | None = None

    def __post_init__(self) -> None:
        if self.fraction is not None and not 0 < self.fraction <= 1:
            raise PerfportError(
                f"a budget share of the space must be above 0% and at most 100%, got "
                f"{self.fraction * 100:g}%"
            )

    def resolved(self, legal: int) -> Budget:
        """This budget with ``fraction`` of ``legal`` configurations as its count (the
        smaller, where a count is given too)."""
        if self.fraction is None:
            return self
        share = max(1, math.ceil(self.fraction * legal - 1e-9))  # 25% of 8 is 2, not 3
        count = share if self.max_evals is None else min(share, self.max_evals)
        return Budget(count, self.max_seconds)


class Stage(Enum):
    """Where a session was when Ctrl-C (or SIGTERM) stopped it. Only an interrupt before or
    during the search leaves the campaign ``interrupted``: once the search has ended, the
    campaign's results are what it finished with, and it keeps its status."""

    START = "start-up"  # the worker starting, before the search
    SEARCH = "search"
    CONFIRM = "re-timing"  # re-timing the best (--confirm), after the search
    END = "end"  # after it all: the worker stopping, the status being stored, other devices


@dataclass(frozen=True)
class TuneResult:
    """A campaign's state after ``tune``: every measurement (earlier sessions' too), the best
    and the default configuration's, and how the space was pruned."""

    campaign: str
    status: CampaignStatus
    device: DeviceInfo
    kernel: str
    problem: Problem
    strategy: str
    space: PruningReport
    measurements: tuple[Measurement, ...]
    default: Measurement | None
    verification: str
    db: str
    prior_sources: int = 0  # other devices' result sets the strategy's prior came from
    prior_skipped: tuple[SkippedSource, ...] = ()  # other devices' results it left out, and why
    # other devices' results it ranked by time, as the objective cannot be computed from them
    prior_by_time: tuple[TimeRanked, ...] = ()
    measured_here: int = 0  # trials this session ran (other writers of the campaign ran the rest)
    warnings: tuple[str, ...] = ()  # e.g. results nothing was compared with (on stderr in the CLI)
    confirmed: Confirmation | None = None  # the top configurations re-timed side by side
    objective: Objective = field(default_factory=Objective)
    scoring: ResultMetrics | None = None  # metrics and roofline fraction of each result
    interrupted: Stage | None = None  # where Ctrl-C stopped this session (None: it was not)

    def metrics(self, m: Measurement | None) -> dict[str, float | None]:
        """A result's metrics (and roofline fraction, when work is declared); {} without."""
        if m is None or self.scoring is None:
            return {}
        return self.scoring.values(m.config, m.time_ms)

    def score(self, m: Measurement) -> float | None:
        """The objective's score of a result (lower is better; None: cannot be ranked)."""
        return self.objective.score_of(m.config, m.time_ms, self.scoring)

    @property
    def best(self) -> Measurement | None:
        """The best ok result by the objective (the fastest by default)."""
        scored = [(s, m) for m in self.measurements if m.ok and (s := self.score(m)) is not None]
        return min(scored, key=lambda sm: sm[0])[1] if scored else None

    @property
    def roofline(self) -> float | None:
        """The best result's fraction of the device's stored ceiling (None: unknown)."""
        return self.metrics(self.best).get(ROOFLINE)

    @property
    def unverified(self) -> int:
        """Correct-looking results whose outputs nothing was compared with (the reference
        configuration's own result is not counted: it is what the others were compared with)."""
        return sum(m.ok and m.check is Check.UNVERIFIED for m in self.measurements)

    @property
    def configs_total(self) -> int:
        """The configurations legal on this device: ``space.legal``, what ``perfport space``
        reports for it (device limits applied)."""
        return self.space.legal

    @property
    def configs_before_device(self) -> int:
        """Configurations the kernel's own restrictions allow, before device limits (what
        ``configs_total`` counted before it matched ``space.legal``)."""
        return self.space.cartesian - self.space.removed(ConstraintSource.KERNEL)

    @property
    def pruned(self) -> int:
        """Ruled out by device limits: before building, or by the built kernel's limits. For
        a list of configurations (``strategy == "listed"``), only the listed ones."""
        after_build = sum(m.outcome is Outcome.PRUNED for m in self.measurements)
        if self.strategy == "listed":  # the space's own pruning is not what was asked about
            return after_build
        return self.space.removed(ConstraintSource.DEVICE) + after_build

    @property
    def measured(self) -> int:
        """Configurations that ran a trial (any outcome but pruned)."""
        return sum(m.outcome.measured for m in self.measurements)

    @property
    def outcomes(self) -> dict[str, int]:
        counts = Counter(m.outcome.value for m in self.measurements if m.outcome.measured)
        counts[Outcome.PRUNED.value] = self.pruned
        return {o.value: counts.get(o.value, 0) for o in Outcome}

    @property
    def speedup(self) -> float | None:
        """default time / best time."""
        best, default = self.best, self.default
        if best and default and default.ok and best.time_ms and default.time_ms:
            return default.time_ms / best.time_ms
        return None

    @property
    def objective_ratio(self) -> float | None:
        """The best's objective value over the default's: the time's, or the metric's (with
        a metric the best may be slower than the default, so ``speedup`` alone misleads)."""
        best, default = self.best, self.default
        if best is None or default is None or not default.ok:
            return None
        b, d = self.score(best), self.score(default)
        if b is None or d is None or not b or not d:
            return None
        return self.objective.value(b) / self.objective.value(d)

    def to_json(self) -> dict[str, Any]:
        def entry(m: Measurement | None) -> dict[str, Any] | None:
            if m is None:
                return None
            s = m.stats
            return {
                "config": dict(m.config),
                "time_ms": m.time_ms,
                "outcome": m.outcome.value,
                "verified": None if m.check is None else m.check is Check.VERIFIED,
                "verified_against": m.verified_against,
                "verification": None if m.check is None else m.check.value,
                "metrics": self.metrics(m),
                "stats": None if s is None else {
                    "n": s.n, "min": s.min, "median": s.median, "mean": s.mean, "std": s.std,
                    "ci95": [s.ci_low, s.ci_high],
                },
            }  # fmt: skip

        return {
            "campaign": self.campaign,
            "status": self.status.value,
            "device": self.device.to_json(),
            "kernel": self.kernel,
            "problem": dict(self.problem),
            "strategy": self.strategy,
            "prior_sources": self.prior_sources,
            "prior_skipped": [s.to_json() for s in self.prior_skipped],
            "prior_by_time": [r.to_json() for r in self.prior_by_time],
            "configs_total": self.configs_total,
            "configs_before_device": self.configs_before_device,
            "pruned": self.pruned,
            "measured": self.measured,
            "measured_this_session": self.measured_here,
            "outcomes": self.outcomes,
            "best": entry(self.best),
            "default": entry(self.default),
            "speedup_over_default": self.speedup,
            "objective_over_default": self.objective_ratio,
            "space": self.space.to_json(),
            "verification": self.verification,
            "unverified": self.unverified,
            "warnings": list(self.warnings),
            "objective": str(self.objective),
            "roofline": self.roofline,
            "roofline_same_bytes": self.metrics(self.best).get(ROOFLINE_SAME_BYTES),
            "ceilings": None
            if self.scoring is None or self.scoring.ceilings is None
            else self.scoring.ceilings.to_json(),
            "confirmed": None if self.confirmed is None else self.confirmed.to_json(),
            "interrupted": None if self.interrupted is None else self.interrupted.value,
            "db": self.db,
        }
