"""The tuning loop: ask -> measure -> store -> tell, within a budget, resumable."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perfport._core import (
    Config,
    DeviceInfo,
    DeviceType,
    KernelSpec,
    Measurement,
    PerfportError,
    Problem,
)
from perfport._core.interrupts import guarded, interruptible
from perfport._core.metrics import Objective, ResultMetrics
from perfport.devices import get_device
from perfport.kernels import resolve_kernel
from perfport.measure import Runner, RunSettings
from perfport.space import Space
from perfport.store import (
    Campaign,
    CampaignStatus,
    Store,
    campaign_settings,
    earlier_failures,
    stored_ceilings,
)
from perfport.store.failures import REMEMBERED, kept_failures
from perfport.strategies import Listed, Ranker, Strategy, make_strategy
from perfport.tune.checks import (
    _buildable,
    _checked_budget,
    _checked_confirm_top,
    _checked_objective,
    _chosen_strategy,
    _legal_space,
    resolve_problem,
    unused_parameters,
)
from perfport.tune.confirm import DEFAULT_SECONDS, Confirmation, confirm_campaign
from perfport.tune.lease import LEASE_S, Lease
from perfport.tune.loop import TuningLoop
from perfport.tune.prebuild import Prebuild
from perfport.tune.prior import Prior, SkippedSource, sourced_prior
from perfport.tune.prior_objective import PriorObjective
from perfport.tune.progress import Progress, RichProgress
from perfport.tune.result import Budget, Stage, TuneResult
from perfport.tune.resume import check_resumable
from perfport.tune.stopping import final_status, status_before, stopped_status
from perfport.tune.verification import _verification_warnings, verification_plan

REPORTING_ONLY = frozenset({"bytes", "flops", "metrics"})
# Builds a strategy's ranker for the legal space (model_guided): from the spec, the problem
# and the space, before the store is opened, so a ranker that cannot be built stores nothing.
RankerFactory = Callable[[KernelSpec, Problem, Space], Ranker]


def campaign_key(
    spec: KernelSpec,
    problem: Problem,
    device: DeviceInfo,
    space: Space,
    strategy: str,
    settings: RunSettings,
) -> str:
    """The default campaign key: the same kernel, problem, device, space, strategy and settings
    give the same key, so running the same command again resumes (or extends) the campaign."""
    identity = json.dumps(
        [
            device.fingerprint,
            spec.source_hash,
            _identity(spec),
            problem.key,
            [label for label, _, _ in space.report.removed_by],
            strategy,
            asdict(settings),
        ],
        sort_keys=True,
        default=str,
    )
    return f"{spec.name}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def _identity(spec: KernelSpec) -> dict[str, Any]:
    """What of the spec's description keys its campaigns. What it states for reporting (work,
    metrics) is not what runs, and a kernel without parameters keeps the default it had before
    its one configuration became the default: either would keep older campaigns from resuming."""
    described = {k: v for k, v in spec.describe().items() if k not in REPORTING_ONLY}
    return described if spec.params else {**described, "default": None}


def tune(
    kernel: KernelSpec | str | Path,
    *,
    problem: Mapping[str, Any] | None = None,
    device: DeviceInfo | str | None = None,
    strategy: str | type[Strategy] | None = None,
    budget: Budget | int | None = None,
    db: str | Path = "perfport.db",
    campaign: str | None = None,
    settings: RunSettings | None = None,
    progress: bool | Progress = False,
    min_work_groups: bool = False,
    configs: Sequence[Mapping[str, Any]] | None = None,
    build_jobs: int = 0,
    lease_s: float = LEASE_S,
    objective: Objective | str | None = None,
    warn: Callable[[str], None] | None = None,
    retry_failed: bool = False,
    confirm_top: int = 0,
    confirm_seconds: float = DEFAULT_SECONDS,
    ranker: RankerFactory | None = None,
) -> TuneResult:
    """Tune ``kernel`` (a KernelSpec, a built-in name or a spec file) and return the result.

    Every result is stored in ``db`` as it arrives. Running again with the same campaign key
    (by default derived from kernel, problem, device, strategy and settings) resumes: stored
    configurations are not measured again, and a larger budget extends the campaign. The
    kernel's default configuration is measured first (it is the baseline for speedups).
    Ctrl-C stops cleanly and returns what was measured, status ``interrupted`` (tune.stopping).
    ``min_work_groups`` adds the soft rule that every compute unit gets a work-group.
    ``configs`` measures exactly these configurations instead of searching (a shipped set on
    a new device: ``perfport select portable``); one the device cannot run is stored as pruned.
    ``build_jobs`` >= 1 compiles the builds the budget can reach ahead, in that many processes
    (``perfport.tune.prebuild``; at most ``MAX_BUILD_JOBS_PER_CORE`` per core), beside the
    trials on a GPU and before them on a CPU, whose timings the compiles would disturb; it
    needs a strategy whose order is fixed (or ``configs``). The processes are spawned, importing
    the calling script again: call ``tune`` under ``if __name__ == "__main__":``.
    Several processes may tune one campaign at once: each claims a configuration in the store
    before measuring it, holding it for ``lease_s`` seconds at a time (renewed while the
    process lives), so none is measured twice, the budget holds for all of them together and
    each reports the campaign's results once the configurations the others held are stored.
    ``objective`` (``"GFLOPs:max"``, an Objective) is what the strategy optimises and the best
    is chosen by: the time (default) or one of the spec's metrics (docs/roofline.md).
    ``warn`` is told, before anything runs, what will not be verified (the CLI prints it).
    A configuration that crashed or timed out in an earlier campaign of the same kernel
    source, device and problem is not run again: that outcome is stored, its message naming
    the campaign, unless ``retry_failed``.
    ``confirm_top`` >= 2 (0: off; 1 is refused) re-times that many of the best by
    ``objective`` at the end, side by side, for at most ``confirm_seconds`` (the CLI does it
    by default): ``TuneResult.confirmed`` names the winner with its interval, or the
    candidates that cannot be told apart; the new samples are added to the stored results.
    ``ranker`` builds the ranker a strategy such as ``model_guided`` needs (the CLI's
    ``--calibration``: ``perfport.model.tunable.guided_ranker``); the campaign key does not
    include it, so the same command with another calibration resumes the campaign.

    >>> import perfport
    >>> result = perfport.tune("vector_add", problem={"n": 65536}, budget=5)  # doctest: +SKIP
    >>> result.best.config, result.best.time_ms  # doctest: +SKIP
    (Config(...), 0.012)
    """
    with interruptible():  # nothing stored yet: a caller's guard may stop us anywhere here
        plan = _planned(
            kernel, problem, device, strategy, budget, settings, min_work_groups, configs,
            build_jobs, objective, _Options(lease_s, retry_failed, confirm_top, confirm_seconds),
            ranker,
        )  # fmt: skip
    if warn is not None:
        for warning in unused_parameters(plan.spec) + verification_plan(plan.spec, plan.settings):
            warn(warning)
    label = _campaign_label(plan.strategy_type, plan.listed)
    key = campaign or campaign_key(
        plan.spec, plan.problem, plan.device, plan.space, label, plan.settings
    )
    reporter = (
        progress if isinstance(progress, Progress) else RichProgress() if progress else Progress()
    )
    with Store(db) as store:
        session = _stored_session(store, plan, key, reporter, keyed=campaign is not None)
        measurements = store.measurements(session.record)
    return session.result(key, db, measurements)


@dataclass(frozen=True)
class _Options:
    """How a session claims, remembers and confirms (``tune``'s arguments of those names)."""

    lease_s: float
    retry_failed: bool
    confirm_top: int
    confirm_seconds: float


@dataclass(frozen=True)
class _Plan:
    """A session's inputs, resolved and checked before the store is opened."""

    spec: KernelSpec
    problem: Problem
    device: DeviceInfo
    settings: RunSettings
    strategy_type: type[Strategy]
    listed: tuple[Config, ...] | None
    space: Space
    budget: Budget
    goal: Objective
    build_jobs: int
    options: _Options
    ranker: Ranker | None = None


def _planned(
    kernel: KernelSpec | str | Path,
    problem: Mapping[str, Any] | None,
    device: DeviceInfo | str | None,
    strategy: str | type[Strategy] | None,
    budget: Budget | int | None,
    settings: RunSettings | None,
    min_work_groups: bool,
    configs: Sequence[Mapping[str, Any]] | None,
    build_jobs: int,
    objective: Objective | str | None,
    options: _Options,
    ranker: RankerFactory | None = None,
) -> _Plan:
    """``tune``'s arguments resolved, in the order their errors are raised."""
    _checked_confirm_top(options.confirm_top)
    spec = resolve_kernel(kernel)
    the_problem = resolve_problem(spec, problem)
    dev = device if isinstance(device, DeviceInfo) else get_device(device, spec.language)
    if settings is not None and not isinstance(settings, RunSettings):
        raise PerfportError(
            f"settings must be a RunSettings, not {type(settings).__name__}; "
            "write perfport.RunSettings(repeats=3, ...)"
        )
    settings = settings or RunSettings()
    strategy_type, listed = _chosen_strategy(spec, the_problem, strategy, configs, build_jobs)
    space = _legal_space(spec, the_problem, dev, min_work_groups)
    resolved = _checked_budget(budget).resolved(len(space))
    goal = _checked_objective(spec, objective)
    if strategy_type.takes_ranker and ranker is None:
        raise PerfportError(f"strategy {strategy_type.name} needs {strategy_type.requires}")
    built = ranker(spec, the_problem, space) if strategy_type.takes_ranker and ranker else None
    _buildable(strategy_type, space, settings.seed, built)
    return _Plan(
        spec, the_problem, dev, settings, strategy_type, listed, space, resolved, goal,
        build_jobs, options, built,
    )  # fmt: skip


def _stored_session(
    store: Store, plan: _Plan, key: str, reporter: Progress, keyed: bool = False
) -> _Session:
    """Open campaign ``key`` in ``store`` and run this session of it to its final status.
    ``keyed``: the caller named the campaign, so its spec may differ from the one it was
    started with (narrowed values), as the caller chose; else it is checked (resume.py)."""
    spec, dev = plan.spec, plan.device
    stored_settings = campaign_settings(asdict(plan.settings), plan.spec)
    store.check_campaign_key(  # before any write
        key,
        dev,
        spec.source_hash,
        plan.problem,
        plan.strategy_type.name,
        stored_settings,
        kernel_name=spec.name,
    )
    if not keyed:
        check_resumable(store, key, plan.space)
    before = status_before(store, key)
    ids = (store.device_id(dev), store.kernel_id(spec), store.problem_id(plan.problem))
    scoring = ResultMetrics.of(
        spec.describe(), plan.problem, stored_ceilings(store).get(dev.fingerprint)
    )
    # Held interrupts from here: the campaign says running only inside the session's try, and
    # its final status is stored whatever stops the session (Ctrl-C, SIGTERM, error).
    with guarded():
        settings = plan.settings
        record = store.open_campaign(
            key,
            ids,
            plan.strategy_type.name,
            settings.seed,
            stored_settings,
            plan.space.report,
            spec.describe(),
        )
        session = _Session(store, record, plan, scoring, before)
        session.run(reporter)
    return session


class _Session:
    """One session of a campaign that is open in the store. What it learns is kept as it goes
    (the prior, the trials run here, the verification), so an interrupt anywhere still
    reports everything it got to."""

    def __init__(
        self,
        store: Store,
        record: Campaign,
        plan: _Plan,
        scoring: ResultMetrics,
        before: CampaignStatus | None = None,
    ):
        self.store, self.record, self.plan, self.scoring = store, record, plan, scoring
        self.status = CampaignStatus.FAILED
        self.before = before  # the campaign's status before this session opened it
        self.interrupted: Stage | None = None
        self.prior: Prior | None = None
        self.prior_skipped: tuple[SkippedSource, ...] = ()  # other devices' results left out
        self.verification = "(no trial ran this session)"
        self.lease = Lease(store, record, lease_s=plan.options.lease_s)
        self.measured_here, self.note = 0, ""
        self.confirmed: Confirmation | None = None
        self.kept_failures = 0  # with retry_failed: this campaign's own, stored before

    def run(self, reporter: Progress) -> None:
        """Search, then confirm; the final status is stored whatever stops it (tune.stopping:
        an interrupt after the search keeps the search's status)."""
        plan, stage = self.plan, Stage.START
        try:
            with (
                Runner(plan.spec, plan.problem, plan.device, plan.settings) as runner,
                self.lease,
                interruptible(),
            ):
                stage = Stage.SEARCH
                self._search(runner, reporter)
                if self.status is CampaignStatus.INTERRUPTED:  # the loop took the Ctrl-C
                    self.interrupted = Stage.SEARCH
                stage = Stage.CONFIRM
                self._confirm(runner)
                stage = Stage.END
        except KeyboardInterrupt:
            self.interrupted = stage
            self.status = stopped_status(stage, self.status, self.before)
        finally:
            self.store.release_claims(self.record, self.lease.writer)  # none left on a clean stop
            self.status, held = final_status(self.store, self.record, self.status)
            if held and self.interrupted is None:
                self.interrupted = Stage.END

    def _search(self, runner: Runner, reporter: Progress) -> None:
        """Ask, measure, store and tell until the budget or the space is spent."""
        plan, store, record = self.plan, self.store, self.record
        by = PriorObjective(plan.goal, plan.spec.describe())
        self.prior, self.prior_skipped = (
            sourced_prior(
                store, plan.spec.name, plan.space, plan.device.fingerprint, dict(plan.problem), by
            )
            if plan.strategy_type.takes_prior
            else (None, ())
        )
        searcher = _searcher(
            plan.strategy_type, plan.listed, plan.space, plan.settings.seed, self.prior,
            plan.ranker,
        )  # fmt: skip
        reuse = _remembered(
            store, record, runner, plan.spec, plan.settings, plan.options.retry_failed
        )
        loop = TuningLoop(
            plan.space, searcher, runner, store, record, plan.budget, reporter, self.lease.writer,
            plan.options.lease_s, score=_scorer(plan.goal, self.scoring), reuse=reuse,
        )  # fmt: skip
        if plan.options.retry_failed:
            self.kept_failures = sum(m.outcome in REMEMBERED for m in loop.stored.values())
        try:
            self.status = _run(
                loop, plan.spec, plan.problem, plan.device, plan.listed, plan.build_jobs
            )
        finally:
            self.measured_here = loop.measured_here

    def _confirm(self, runner: Runner) -> None:
        """Re-time the best by the objective side by side unless interrupted; then what was
        verified."""
        options, settings = self.plan.options, self.plan.settings
        if options.confirm_top >= 2 and self.status is not CampaignStatus.INTERRUPTED:
            self.confirmed = confirm_campaign(
                self.store, self.record, runner, options.confirm_top, options.confirm_seconds,
                settings.seed, self.plan.goal, self.scoring,
            )  # fmt: skip
        if runner.starts:
            self.verification = runner.verification
        self.note = runner.reference_note if settings.verify else ""

    def result(self, key: str, db: str | Path, measurements: Sequence[Measurement]) -> TuneResult:
        """What ``tune`` returns: the campaign's results and this session's account of them."""
        plan, settings = self.plan, self.plan.settings
        spec = plan.spec
        by_config = {m.config: m for m in measurements}
        warnings = _verification_warnings(
            measurements, settings.verify, self.verification, self.note
        ) + kept_failures(self.kept_failures)
        return TuneResult(
            campaign=key,
            status=self.status,
            device=plan.device,
            kernel=spec.name,
            problem=plan.problem,
            strategy=plan.strategy_type.name,
            space=plan.space.report,
            measurements=tuple(measurements),
            default=by_config.get(spec.default) if spec.default is not None else None,
            verification=self.verification if settings.verify else "not verified",
            db=str(db),
            prior_sources=self.prior.sources if self.prior else 0,
            prior_skipped=self.prior_skipped,
            prior_by_time=self.prior.by_time if self.prior else (),
            measured_here=self.measured_here,
            warnings=warnings,
            objective=plan.goal,
            scoring=self.scoring,
            confirmed=self.confirmed,
            interrupted=self.interrupted,
        )


def _scorer(goal: Objective, scoring: ResultMetrics) -> Callable[[Measurement], float | None]:
    """What the strategy is told of a result: its time, or the objective's score."""

    def score(m: Measurement) -> float | None:
        return goal.score_of(m.config, m.time_ms, scoring)

    return score


def _remembered(
    store: Store,
    record: Campaign,
    runner: Runner,
    spec: KernelSpec,
    settings: RunSettings,
    retry_failed: bool,
) -> dict[Config, Measurement]:
    """What crashed or hung in earlier campaigns, to store instead of trying again; a default
    configuration among them does not make the reference outputs either."""
    if retry_failed:
        return {}
    reuse = earlier_failures(store, record, settings.timeout_s, spec.launch_hash)
    if spec.default is not None and spec.default in reuse:
        outcome = reuse[spec.default].outcome.value
        runner.forgo(spec.default, f"gave {outcome} in an earlier campaign")
    return reuse


def _campaign_label(strategy_type: type[Strategy], listed: tuple[Config, ...] | None) -> str:
    """The strategy's name in the campaign key; a list's digest follows it, since another list
    is another campaign."""
    label = strategy_type.name
    if listed is not None:
        text = json.dumps([dict(c) for c in listed], sort_keys=True, default=str)
        label += ":" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return label


def _searcher(
    strategy_type: type[Strategy],
    listed: tuple[Config, ...] | None,
    space: Space,
    seed: int,
    prior: Prior | None,
    ranker: Ranker | None = None,
) -> Strategy:
    """The strategy of this session; a listed configuration outside ``space`` is left out (it
    is stored as pruned after the search)."""
    if listed is None:
        return make_strategy(strategy_type, space, seed, prior.scores if prior else None, ranker)
    found = [space.index(c) for c in listed]
    return Listed(space, seed, tuple(i for i in found if i is not None))


def _run(
    loop: TuningLoop,
    spec: KernelSpec,
    problem: Problem,
    device: DeviceInfo,
    listed: tuple[Config, ...] | None,
    build_jobs: int,
) -> CampaignStatus:
    """Run the loop, with ``build_jobs`` processes compiling ahead (on a CPU the trials wait
    for them, whose compiles would disturb the timings); then store the listed configurations
    the device cannot run as pruned."""
    ahead = None
    try:
        if build_jobs:
            ahead = Prebuild(spec, device, loop.planned_builds(spec, problem), build_jobs)
        status = loop.run(
            spec.default if listed is None else None,
            f"{spec.name} on {device.name}",
            ahead if device.type is DeviceType.CPU else None,
        )
    finally:
        if ahead is not None:
            ahead.close()
    for c in listed or ():
        if loop.space.index(c) is None and status is not CampaignStatus.INTERRUPTED:
            loop.measure_outside(c)  # beyond the device's limits: stored as pruned
    return status
