"""The tuning loop: ask -> measure -> store -> tell, within a budget, resumable."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from perfport._core import DeviceInfo, KernelSpec, Measurement, PerfportError, Problem, SpecError
from perfport.devices import get_device
from perfport.kernels import resolve_kernel
from perfport.measure import Runner, RunSettings
from perfport.space import Space, kernel_space
from perfport.store import Campaign, CampaignStatus, Store
from perfport.strategies import Strategy, strategy_class
from perfport.tune.progress import Progress, RichProgress
from perfport.tune.result import Budget, TuneResult


def resolve_problem(spec: KernelSpec, problem: Mapping[str, Any] | None) -> Problem:
    """The kernel's default problem updated with ``problem``; unknown names are an error."""
    given = dict(problem or {})
    unknown = set(given) - set(spec.problem)
    if unknown:
        known = ", ".join(spec.problem) or "none"
        raise SpecError(
            f"kernel {spec.name} has no problem value {', '.join(sorted(unknown))}; its problem values: {known}"
        )
    return spec.problem.merged(given)


def campaign_key(
    spec: KernelSpec, problem: Problem, device: DeviceInfo, strategy: str, settings: RunSettings
) -> str:
    """The default campaign key: the same kernel, problem, device, strategy and settings give
    the same key, so running the same command again resumes (or extends) the campaign."""
    identity = json.dumps(
        [
            device.fingerprint,
            spec.source_hash,
            spec.describe(),
            problem.key,
            strategy,
            asdict(settings),
        ],
        sort_keys=True,
        default=str,
    )
    return f"{spec.name}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def tune(
    kernel: KernelSpec | str | Path,
    *,
    problem: Mapping[str, Any] | None = None,
    device: DeviceInfo | str | None = None,
    strategy: str | None = None,
    budget: Budget | int | None = None,
    db: str | Path = "perfport.db",
    campaign: str | None = None,
    settings: RunSettings | None = None,
    progress: bool | Progress = False,
) -> TuneResult:
    """Tune ``kernel`` (a KernelSpec, a built-in name or a spec file) and return the result.

    Every result is stored in ``db`` as it arrives. Running again with the same campaign key
    (by default derived from kernel, problem, device, strategy and settings) resumes: stored
    configurations are not measured again, and a larger budget extends the campaign. The
    kernel's default configuration is measured first (it is the baseline for speedups).
    Ctrl-C stops cleanly and returns what was measured, with status ``interrupted``.

    >>> import perfport
    >>> result = perfport.tune("vector_add", problem={"n": 65536}, budget=5)  # doctest: +SKIP
    >>> result.best.config, result.best.time_ms  # doctest: +SKIP
    (Config(...), 0.012)
    """
    spec = resolve_kernel(kernel)
    the_problem = resolve_problem(spec, problem)
    dev = device if isinstance(device, DeviceInfo) else get_device(device, spec.language)
    settings = settings or RunSettings()
    strategy_type = strategy_class(strategy)
    if isinstance(budget, int):
        budget = Budget(max_evals=budget)
    budget = budget or Budget()
    if budget.max_evals is not None and budget.max_evals < 1:
        raise PerfportError(f"budget must be at least 1 evaluation, got {budget.max_evals}")
    space = kernel_space(spec, the_problem, dev)
    key = campaign or campaign_key(spec, the_problem, dev, strategy_type.name, settings)
    reporter = (
        progress if isinstance(progress, Progress) else RichProgress() if progress else Progress()
    )

    with Store(db) as store:
        record = store.open_campaign(
            key,
            dev,
            spec,
            the_problem,
            strategy_type.name,
            settings.seed,
            asdict(settings),
            space.report,
        )
        loop = _Loop(
            spec,
            the_problem,
            dev,
            space,
            strategy_type(space, settings.seed),
            store,
            record,
            budget,
            settings,
            reporter,
        )
        status = loop.run()
        return TuneResult(
            campaign=key,
            status=status,
            device=dev,
            kernel=spec.name,
            problem=the_problem,
            strategy=strategy_type.name,
            space=space.report,
            measurements=tuple(loop.results.values()),
            default=loop.results.get(spec.default) if spec.default is not None else None,
            verification=loop.verification,
            db=str(db),
        )


class _Loop:
    """One session of one campaign."""

    def __init__(
        self,
        spec: KernelSpec,
        problem: Problem,
        device: DeviceInfo,
        space: Space,
        strategy: Strategy,
        store: Store,
        campaign: Campaign,
        budget: Budget,
        settings: RunSettings,
        progress: Progress,
    ) -> None:
        self.spec, self.space, self.strategy = spec, space, strategy
        self.store, self.campaign, self.budget, self.progress = store, campaign, budget, progress
        self.runner = Runner(spec, problem, device, settings)
        self.stored = {m.config: m for m in store.measurements(campaign)}
        self.results: dict[
            Any, Measurement
        ] = {}  # this campaign's results in the order the strategy met them
        self.verification = "not verified" if not settings.verify else "(no trial ran this session)"
        self.started = time.monotonic()

    def run(self) -> CampaignStatus:
        status = CampaignStatus.FAILED
        total = min(len(self.space), self.budget.max_evals or len(self.space))
        self.progress.start(
            total, len(self.stored), f"{self.spec.name} on {self.runner.device.name}"
        )
        try:
            status = self._search()
        except KeyboardInterrupt:
            status = CampaignStatus.INTERRUPTED
        finally:
            self.progress.stop()
            self.runner.close()
            if self.runner.starts:
                self.verification = self.runner.verification
            self.store.set_status(self.campaign, status)
            for config, m in self.stored.items():  # results the strategy did not reach again
                self.results.setdefault(config, m)
        return status

    def _search(self) -> CampaignStatus:
        default = self.spec.default
        if default is not None and (i := self.space.index(default)) is not None:
            self._evaluate(i)
        while True:
            if self.budget.max_evals is not None and len(self.stored) >= self.budget.max_evals:
                return CampaignStatus.BUDGET
            if (
                self.budget.max_seconds is not None
                and time.monotonic() - self.started >= self.budget.max_seconds
            ):
                return CampaignStatus.BUDGET
            index = self.strategy.ask()
            if index is None or index in self.strategy.told:
                return CampaignStatus.COMPLETE
            self._evaluate(index)

    def _evaluate(self, index: int) -> None:
        config = self.space.config(index)
        m = self.stored.get(config)
        if m is None:
            m = self.runner.measure(config)
            self.store.record(self.campaign, m)
            self.stored[config] = m
            best = self.strategy.best
            self.progress.update(
                len(self.stored), m, min(filter(None, [best and best[1], m.time_ms]), default=None)
            )
        self.results[config] = m
        self.strategy.tell(index, m.time_ms)
