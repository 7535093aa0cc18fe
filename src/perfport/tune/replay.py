"""Replay: run search strategies against stored or imported measurements, with no device.

The measured configurations of one device/kernel/problem become the space; asking a
configuration "measures" it by looking up its stored time (failures stay failures). Which time
is the objective: by default the source's own, the median of the repetitions for perfport's
measurements and the file's ``time`` for an imported Kernel Tuner cache or T4 file (the mean of
its repetitions, which Kernel Tuner and its published results rank by); ``Objective`` chooses.
Each repeat seeds the strategy differently; the score after each evaluation is the optimum
divided by the best time found so far (1.0 = the optimum was found).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Config, Param, PerfportError, value_key
from perfport._core.identifiers import is_identifier
from perfport.space import Space
from perfport.store import ResultRow, Store, declared_params, one_group
from perfport.strategies import Strategy, checked_ask, make_strategy, strategy_class
from perfport.tune.prior import Prior, SkippedSource, sourced_prior

StrategyFactory = Callable[[Space, int], Strategy]


class Objective(Enum):
    """The time a replay ranks configurations by."""

    MEDIAN = "median"  # the median of the repetitions (perfport's own objective)
    MEAN = "mean"  # the mean of the repetitions
    TIME = "time"  # an imported file's own ``time``: Kernel Tuner's and T4's mean


def _objective(given: Objective | str | None) -> Objective | None:
    if given is None or isinstance(given, Objective):
        return given
    try:
        return Objective(given)
    except ValueError:
        raise PerfportError(
            f"objective {given!r}: give one of {', '.join(o.value for o in Objective)}"
        ) from None


def own_objective(rows: list[ResultRow]) -> Objective:
    """The objective the results were ranked by where they came from: ``time`` for files
    imported from Kernel Tuner or T4 (their campaigns are keyed ``import-...``), else the
    median, as perfport ranks its own measurements."""
    return (
        Objective.TIME if all(r.campaign.startswith("import-") for r in rows) else Objective.MEDIAN
    )


def _objective_ms(row: ResultRow, objective: Objective) -> float | None:
    return row.median_ms if objective is Objective.MEDIAN else row.mean_ms


@dataclass(frozen=True)
class ReplayData:
    """One device/kernel/problem's measurements as a space and a time per configuration."""

    label: str
    space: Space
    times: np.ndarray  # median ms per legal configuration; NaN where it failed
    kernel: str = ""  # where the data came from, when it came from a store
    device_fingerprint: str = ""
    problem: Mapping[str, Any] = field(default_factory=dict)
    objective: Objective = Objective.MEDIAN  # which time ``times`` holds
    device: str = ""  # its name, when it came from a store

    @property
    def optimum(self) -> float:
        return float(np.nanmin(self.times))

    @classmethod
    def from_store(
        cls,
        store: Store,
        kernel: str | None = None,
        device: str | None = None,
        objective: Objective | str | None = None,
        problem: Mapping[str, Any] | None = None,
    ) -> ReplayData:
        """One device's stored results; ``objective`` None: the source's own (``own_objective``);
        ``problem``: only the results at these problem values (one kernel at several sizes)."""
        rows = one_group(store, kernel=kernel, device=device, problem=problem)
        own = own_objective(rows)
        objective = _objective(objective) or own
        if objective is Objective.TIME and own is not Objective.TIME:
            raise PerfportError(
                "--objective time is the 'time' of an imported Kernel Tuner cache or T4 file; "
                "these are perfport's own measurements: use --objective median or mean"
            )
        declared = declared_params(
            store, rows[0].kernel_hash, rows[0].kernel, {r.campaign for r in rows}
        )
        params = _params(rows, declared)
        space = Space.from_configs(params, [r.config for r in rows])
        times = np.full(len(space), np.nan)
        for r in rows:
            i = space.index(r.config)
            if i is not None and r.ok:
                ms = _objective_ms(r, objective)
                times[i] = ms if ms is not None and ms > 0 else np.nan  # 0 ms: not a time
        if not np.isfinite(times).any():
            raise PerfportError("the selected results have no successful measurement to replay")
        first = rows[0]
        return cls(f"{first.kernel} on {first.device}", space, times, first.kernel,
                   first.device_fingerprint, dict(first.problem), objective, first.device)  # fmt: skip

    def config(self, index: int) -> Config:
        return self.space.config(index)


def _params(rows: list[ResultRow], declared: Mapping[str, list[Any]]) -> list[Param]:
    """The parameters of the replayed space: each with its declared values where they hold
    every stored one, else the stored values. A value declared twice counts once (a Kernel
    Tuner cache may declare one twice; a space's values are distinct)."""
    params = []
    for name in rows[0].config:
        if not is_identifier(name):  # a space's parameters are names in its expressions
            raise PerfportError(
                f"{rows[0].kernel} on {rows[0].device}: parameter name {name[:40]!r} is not an "
                "identifier (letters, digits, _), as replay's search space needs; rename it "
                f"(say to {_identifier(name[:40])!r}) in the file's tune_params_keys, "
                "tune_params and entries, and import that file into a new --db"
            )
        # By value_key: a parameter may take both 1 and True, which Python equates.
        seen = {value_key(r.config[name]): r.config[name] for r in rows}
        values = {value_key(v): v for v in declared.get(name) or []}
        chosen = (
            values.values()
            if seen.keys() <= values.keys()
            else sorted(seen.values(), key=lambda v: (isinstance(v, str), v))
        )
        params.append(Param(name, tuple(chosen)))
    return params


def _identifier(name: str) -> str:
    """``name`` with what an identifier may not hold made ``_``."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return text if is_identifier(text) else f"_{text}"


def simulate(data: ReplayData, factory: StrategyFactory, budget: int, seed: int) -> np.ndarray:
    """Best time found after each of ``budget`` evaluations (inf before the first success);
    shorter if the strategy stops early."""
    strategy = factory(data.space, seed)
    best = np.inf
    trace = []
    for _ in range(min(budget, len(data.space))):
        i = checked_ask(strategy)  # as tune checks it: a user's strategy named, not numpy
        if i is None:
            break
        t = data.times[i]
        value = None if np.isnan(t) else float(t)
        strategy.tell(i, value)
        if value is not None:
            best = min(best, value)
        trace.append(best)
    return np.array(trace)


@dataclass(frozen=True)
class ReplayResult:
    strategy: str
    data: str
    budget: int
    repeats: int
    optimum_ms: float
    curve: tuple[float, ...]  # mean fraction of the optimum after each evaluation
    mean_best_fraction: float
    # fraction -> median evaluations to reach it (None: not in most runs); an int where the
    # median is whole, else the exact half (an even number of runs: 62 and 65 give 63.5)
    evals_to: dict[float, int | float | None]
    prior_sources: int = 0  # other devices' result sets the strategy's prior came from
    objective: Objective = Objective.MEDIAN  # the time the configurations were ranked by
    # The stored configurations replayed: the optimum is the best of these, which is the
    # space's only when every legal configuration was measured.
    configurations: int = 0
    # What was replayed (its kernel, device and problem): not compared, not shown.
    source: ReplayData | None = field(default=None, compare=False, repr=False)
    prior_skipped: tuple[SkippedSource, ...] = ()  # other devices' results the prior left out

    @property
    def median_evals_to_95(self) -> int | float | None:
        return self.evals_to.get(0.95)

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "data": self.data,
            "kernel": self.source.kernel if self.source else None,
            "device": self.source.device if self.source else None,
            "device_fingerprint": self.source.device_fingerprint if self.source else None,
            "problem": dict(self.source.problem) if self.source else None,
            "budget": self.budget,
            "repeats": self.repeats,
            "optimum_ms": self.optimum_ms,
            "mean_best_fraction": self.mean_best_fraction,
            "median_evals_to_95": self.median_evals_to_95,
            "median_evals_to_90": self.evals_to.get(0.9),
            "prior_sources": self.prior_sources,
            "prior_skipped": [s.to_json() for s in self.prior_skipped],
            "objective": self.objective.value,
            "curve": list(self.curve),
            "configurations": self.configurations,
        }


def evals_to(fractions: np.ndarray, target: float) -> float:
    """Evaluations (1-based) until the fraction reaches ``target``; inf if it never does."""
    hit = np.flatnonzero(fractions >= target - 1e-12)
    return float(hit[0] + 1) if len(hit) else np.inf


def score(
    data: ReplayData, traces: list[np.ndarray], budget: int
) -> tuple[np.ndarray, dict[float, int | float | None]]:
    """Mean fraction-of-optimum curve over runs, and median evaluations to 90% and 95%."""
    runs = np.zeros((len(traces), budget))
    for k, trace in enumerate(traces):
        fraction = np.where(np.isfinite(trace), data.optimum / trace, 0.0)
        padded = np.concatenate(
            [fraction, np.full(budget - len(fraction), fraction[-1] if len(fraction) else 0.0)]
        )
        runs[k] = padded[:budget]
    reached: dict[float, int | float | None] = {}
    for target in (0.9, 0.95):
        median = float(np.median([evals_to(r, target) for r in runs]))
        if not np.isfinite(median):
            reached[target] = None
        else:
            reached[target] = int(median) if median.is_integer() else median
    return runs.mean(0), reached


def replay(
    data: ReplayData,
    strategy: str | None = None,
    budget: int = 100,
    repeats: int = 30,
    seed: int = 0,
    factory: StrategyFactory | None = None,
    prior: Prior | None = None,
) -> ReplayResult:
    """Run a strategy ``repeats`` times (seeds seed..seed+repeats-1) on replayed data;
    ``prior`` goes to a strategy that takes one."""
    if budget < 1 or repeats < 1:
        raise PerfportError("replay needs --budget >= 1 and --repeats >= 1")
    cls = strategy_class(strategy)
    if cls.takes_ranker and factory is None:
        raise _needs_ranker(strategy)
    make = factory or (
        lambda space, s: make_strategy(cls, space, s, prior.scores if prior else None)
    )
    budget = min(budget, len(data.space))
    traces = [simulate(data, make, budget, seed + r) for r in range(repeats)]
    curve, reached = score(data, traces, budget)
    sources = prior.sources if prior is not None and cls.takes_prior else 0
    return ReplayResult(cls.name if factory is None else (strategy or "custom"), data.label, budget, repeats,
                        data.optimum, tuple(float(x) for x in curve), float(curve[-1]), reached,
                        sources, data.objective, len(data.space), data)  # fmt: skip


def replay_db(
    db: str | Path,
    kernel: str | None,
    device: str | None,
    strategy: str | None,
    budget: int,
    repeats: int,
    seed: int = 0,
    objective: Objective | str | None = None,
    problem: Mapping[str, Any] | None = None,
) -> ReplayResult:
    """Replay one device's stored results, ranked by ``objective`` (None: the source's own);
    a strategy that takes a prior gets one from the other devices' results in the same store,
    as ``perfport tune`` would."""
    if strategy_class(strategy).takes_ranker:  # before the store is read
        raise _needs_ranker(strategy)
    with Store(db, create=False) as store:
        data = ReplayData.from_store(
            store, kernel=kernel, device=device, objective=objective, problem=problem
        )
        prior, skipped = (
            sourced_prior(store, data.kernel, data.space, data.device_fingerprint, data.problem)
            if strategy_class(strategy).takes_prior
            else (None, ())
        )
    result = replay(data, strategy, budget, repeats, seed, prior=prior)
    return replace(result, prior_skipped=skipped)


def _needs_ranker(strategy: str | None) -> PerfportError:
    return PerfportError(
        f"replay cannot run {strategy}: it needs a calibrated model of a loopy kernel; run "
        f"'perfport tune loopy-fd --strategy {strategy} --calibration FILE', or replay the "
        "paper's kernels with 'python benchmarks/model_guided.py replay'"
    )
