"""The tuning loop: ask -> measure -> store -> tell, within a budget, resumable."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from perfport._core import (
    ArrayArg,
    Check,
    Config,
    DeviceInfo,
    DeviceType,
    KernelSpec,
    Measurement,
    PerfportError,
    Problem,
    SpecError,
)
from perfport._core.interrupts import guarded, interruptible, take_held
from perfport._core.metrics import Objective, ResultMetrics
from perfport.devices import get_device
from perfport.kernels import resolve_kernel
from perfport.measure import Runner, RunSettings
from perfport.space import Space, empty_space_hint, kernel_space
from perfport.store import Campaign, CampaignStatus, Store, earlier_failures, stored_ceilings
from perfport.strategies import Listed, Strategy, make_strategy, strategy_class
from perfport.tune.confirm import DEFAULT_SECONDS, Confirmation, confirm_campaign
from perfport.tune.lease import LEASE_S, Lease
from perfport.tune.loop import TuningLoop
from perfport.tune.prebuild import Prebuild
from perfport.tune.prior import Prior, transfer_prior
from perfport.tune.progress import Progress, RichProgress
from perfport.tune.result import Budget, TuneResult

# Compiling processes per core: on the 16-core GPU machine 60 beat 14 (2.5x vs 2.2x less wall
# time), so builds are not purely CPU-bound; far more only thrash.
MAX_BUILD_JOBS_PER_CORE = 4


def resolve_problem(spec: KernelSpec, problem: Mapping[str, Any] | None) -> Problem:
    """The kernel's default problem updated with ``problem``; unknown names are an error."""
    given = dict(problem or {})
    unknown = set(given) - set(spec.problem)
    if unknown:
        known = ", ".join(spec.problem) or "none"
        raise SpecError(
            f"kernel {spec.name} has no problem value {', '.join(sorted(unknown))}; its problem values: {known}"
        )
    for name, value in given.items():
        _check_problem_value(spec, name, value, spec.problem[name])
    return spec.problem.merged(given)


def _check_problem_value(spec: KernelSpec, name: str, value: Any, default: Any) -> None:
    """A given problem value has its default's type (an integer size stays an integer): a
    wrong one would otherwise be stored, or fail deep inside a build."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, kind = number and isinstance(value, int), "an integer"
    elif isinstance(default, float):
        ok, kind = number and math.isfinite(value), "a finite number"
    else:
        ok, kind = isinstance(value, str), "a name"
    if not ok:
        raise SpecError(
            f"kernel {spec.name}: problem value {name} must be {kind} (default {default!r}), "
            f"got {value!r}"
        )


def _listed(
    spec: KernelSpec, problem: Problem, configs: Sequence[Mapping[str, Any]]
) -> tuple[Config, ...]:
    """The configurations to measure, checked against the kernel (not yet the device)."""
    if not configs:
        raise PerfportError("no configurations to measure; give at least one")
    kernel_only = kernel_space(spec, problem)
    out: dict[Config, None] = {}
    for n, c in enumerate(configs, 1):
        if not isinstance(c, Mapping):
            raise SpecError(f"configuration {n} is {c!r}; give parameter names and values")
        spec.check_config(c, f"configuration {n}")
        if kernel_only.index(c) is None:
            raise SpecError(
                f"configuration {n} {dict(c)} breaks kernel {spec.name}'s restrictions; "
                "it is not one of its configurations"
            )
        out.setdefault(Config.of(c))
    return tuple(out)


REPORTING_ONLY = frozenset({"bytes", "flops", "metrics"})


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
            # What a spec states for reporting (work, metrics) is not what runs: adding it
            # keeps older campaigns' keys.
            {k: v for k, v in spec.describe().items() if k not in REPORTING_ONLY},
            problem.key,
            [label for label, _, _ in space.report.removed_by],
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
    min_work_groups: bool = False,
    configs: Sequence[Mapping[str, Any]] | None = None,
    build_jobs: int = 0,
    lease_s: float = LEASE_S,
    objective: Objective | str | None = None,
    warn: Callable[[str], None] | None = None,
    retry_failed: bool = False,
    confirm_top: int = 0,
    confirm_seconds: float = DEFAULT_SECONDS,
) -> TuneResult:
    """Tune ``kernel`` (a KernelSpec, a built-in name or a spec file) and return the result.

    Every result is stored in ``db`` as it arrives. Running again with the same campaign key
    (by default derived from kernel, problem, device, strategy and settings) resumes: stored
    configurations are not measured again, and a larger budget extends the campaign. The
    kernel's default configuration is measured first (it is the baseline for speedups).
    Ctrl-C stops cleanly and returns what was measured, with status ``interrupted``.
    ``min_work_groups`` adds the soft rule that every compute unit gets a work-group.
    ``configs`` measures exactly these configurations instead of searching (a shipped set on
    a new device: ``perfport select portable``); one the device cannot run is stored as pruned.
    ``build_jobs`` >= 1 compiles the builds the budget can reach ahead, in that many processes
    (``perfport.tune.prebuild``; at most ``MAX_BUILD_JOBS_PER_CORE`` per core), beside the
    trials on a GPU and before them on a CPU, whose timings the compiles would disturb; it
    needs a strategy whose order is fixed (or ``configs``).
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
    ``confirm_top`` >= 2 re-times that many of the fastest configurations at the end, side by
    side, for at most ``confirm_seconds`` (``perfport.tune.confirm``; the CLI does it by
    default): ``TuneResult.confirmed`` names the winner with its interval, or the candidates
    that cannot be told apart; the new samples are added to the stored results.

    >>> import perfport
    >>> result = perfport.tune("vector_add", problem={"n": 65536}, budget=5)  # doctest: +SKIP
    >>> result.best.config, result.best.time_ms  # doctest: +SKIP
    (Config(...), 0.012)
    """
    with interruptible():  # nothing stored yet: a caller's guard may stop us anywhere here
        spec = resolve_kernel(kernel)
        the_problem = resolve_problem(spec, problem)
        dev = device if isinstance(device, DeviceInfo) else get_device(device, spec.language)
        settings = settings or RunSettings()
        strategy_type, listed = _chosen_strategy(spec, the_problem, strategy, configs, build_jobs)
        space = _legal_space(spec, the_problem, dev, min_work_groups)
        budget = _checked_budget(budget).resolved(len(space))
        goal = _checked_objective(spec, objective)
    if warn is not None:
        for warning in verification_plan(spec, settings):
            warn(warning)
    label = _campaign_label(strategy_type, listed)
    key = campaign or campaign_key(spec, the_problem, dev, space, label, settings)
    reporter = (
        progress if isinstance(progress, Progress) else RichProgress() if progress else Progress()
    )

    with Store(db) as store:
        store.check_campaign_key(key, dev, spec.source_hash, the_problem)  # before any write
        ids = (store.device_id(dev), store.kernel_id(spec), store.problem_id(the_problem))
        scoring = ResultMetrics.of(
            spec.describe(), the_problem, stored_ceilings(store).get(dev.fingerprint)
        )
        # Held interrupts from here: the campaign says running only inside the try below,
        # and its final status is stored whatever stops the session (Ctrl-C, SIGTERM, error).
        with guarded():
            record = store.open_campaign(
                key, ids, strategy_type.name, settings.seed, asdict(settings), space.report
            )
            status, prior, verification = CampaignStatus.FAILED, None, "(no trial ran this session)"
            lease, measured_here, note = Lease(store, record, lease_s=lease_s), 0, ""
            confirmed: Confirmation | None = None
            try:
                with Runner(spec, the_problem, dev, settings) as runner, lease, interruptible():
                    prior = (
                        transfer_prior(store, spec.name, space, dev.fingerprint, dict(the_problem))
                        if strategy_type.takes_prior
                        else None
                    )
                    searcher = _searcher(strategy_type, listed, space, settings.seed, prior)
                    reuse = _remembered(store, record, runner, spec, settings, retry_failed)
                    loop = TuningLoop(
                        space, searcher, runner, store, record, budget, reporter, lease.writer,
                        lease_s, score=_scorer(goal, scoring), reuse=reuse,
                    )  # fmt: skip
                    try:
                        status = _run(loop, spec, the_problem, dev, listed, build_jobs)
                    finally:
                        measured_here = loop.measured_here
                    if confirm_top >= 2 and status is not CampaignStatus.INTERRUPTED:
                        confirmed = confirm_campaign(
                            store, record, runner, confirm_top, confirm_seconds, settings.seed
                        )
                    if runner.starts:
                        verification = runner.verification
                    note = runner.reference_note if settings.verify else ""
            except KeyboardInterrupt:
                status = CampaignStatus.INTERRUPTED
            finally:
                store.release_claims(record, lease.writer)  # none is left on a clean stop
                status = _final_status(store, record, status)
        measurements = store.measurements(record)
    by_config = {m.config: m for m in measurements}
    warnings = _verification_warnings(measurements, settings.verify, verification, note)
    return TuneResult(
        campaign=key,
        status=status,
        device=dev,
        kernel=spec.name,
        problem=the_problem,
        strategy=strategy_type.name,
        space=space.report,
        measurements=tuple(measurements),
        default=by_config.get(spec.default) if spec.default is not None else None,
        verification=verification if settings.verify else "not verified",
        db=str(db),
        prior_sources=prior.sources if prior else 0,
        measured_here=measured_here,
        warnings=warnings,
        objective=goal,
        scoring=scoring,
        confirmed=confirmed,
    )


def _checked_objective(spec: KernelSpec, objective: Objective | str | None) -> Objective:
    """The objective, refused before any device work unless the kernel has that metric."""
    goal = Objective.parse(objective) if isinstance(objective, str) else objective or Objective()
    names = ResultMetrics.of(spec.describe(), spec.problem).names
    if goal.name != "time_ms" and goal.name not in names:
        raise SpecError(
            f"objective {goal.name}: kernel {spec.name} has no such metric; its metrics: "
            f"{', '.join(('time', *names))} (declare more under 'metrics' in the spec)"
        )
    return goal


def _scorer(goal: Objective, scoring: ResultMetrics) -> Callable[[Measurement], float | None]:
    """What the strategy is told of a result: its time, or the objective's score."""

    def score(m: Measurement) -> float | None:
        if goal.is_time or goal.name == "time_ms":
            return goal.score(m.time_ms) if not goal.is_time else m.time_ms
        return goal.score(scoring.values(m.config, m.time_ms).get(goal.name))

    return score


def verification_plan(spec: KernelSpec, settings: RunSettings) -> tuple[str, ...]:
    """What a campaign of ``spec`` will not verify, said before it starts."""
    outputs = [a for a in spec.args if isinstance(a, ArrayArg) and a.output]
    if not settings.verify:
        return ("outputs will not be verified (verification is off): wrong results are timed",)
    if not outputs:
        return (f"kernel {spec.name} has no output arrays: its outputs cannot be verified",)
    if all(a.ignore for a in outputs) and spec.verify is None:
        return (f"every output of kernel {spec.name} is ignored: nothing will be verified",)
    if spec.reference is None and spec.reference_kernel is None and spec.default is None:
        return (
            f"kernel {spec.name} has no reference, reference kernel or default configuration: "
            "outputs are compared with those of the first configuration that runs",
        )
    return ()


def _verification_warnings(
    measurements: Sequence[Measurement], verify: bool, verification: str, note: str
) -> tuple[str, ...]:
    """What the CLI says loudly: results nothing was compared with, and outputs compared with
    a configuration other than the default one."""
    out = []
    unverified = sum(m.ok and m.check is Check.UNVERIFIED for m in measurements)
    if unverified:
        why = "verification is off (--no-verify)" if not verify else verification
        ok = sum(m.ok for m in measurements)
        out.append(f"{unverified} of {ok} correct-looking results are not verified: {why}")
    against = {m.verified_against for m in measurements if m.check is Check.VERIFIED}
    if note and any(a and a.startswith("reference configuration") for a in against):
        out.append(f"outputs verified against another configuration's, since {note}")
    return tuple(out)


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
    reuse = earlier_failures(store, record, settings.timeout_s)
    if spec.default is not None and spec.default in reuse:
        outcome = reuse[spec.default].outcome.value
        runner.forgo(spec.default, f"gave {outcome} in an earlier campaign")
    return reuse


def _final_status(store: Store, record: Campaign, status: CampaignStatus) -> CampaignStatus:
    """Store the session's final status: interrupted when a signal is held (it arrived while
    the worker was being stopped or the status written)."""
    if take_held():
        status = CampaignStatus.INTERRUPTED
    store.set_status(record, status)
    if take_held() and status is not CampaignStatus.INTERRUPTED:
        status = CampaignStatus.INTERRUPTED
        store.set_status(record, status)
    return status


def _chosen_strategy(
    spec: KernelSpec,
    problem: Problem,
    strategy: str | None,
    configs: Sequence[Mapping[str, Any]] | None,
    build_jobs: int,
) -> tuple[type[Strategy], tuple[Config, ...] | None]:
    """The strategy class, and the listed configurations when ``configs`` replaces the search;
    refuses what cannot run together before any device work starts."""
    if configs is not None and strategy is not None:
        raise PerfportError("give configurations to measure or a strategy, not both")
    listed = None if configs is None else _listed(spec, problem, configs)
    strategy_type = Listed if listed is not None else strategy_class(strategy)
    most = MAX_BUILD_JOBS_PER_CORE * (os.cpu_count() or 1)
    if build_jobs > most:
        raise PerfportError(
            f"--build-jobs {build_jobs} is more than {most} ({MAX_BUILD_JOBS_PER_CORE} per core "
            "here); more processes only slow each other down"
        )
    if build_jobs and strategy_type.plan is Strategy.plan:
        raise PerfportError(
            f"strategy {strategy_type.name} chooses as it goes, so its builds cannot be compiled "
            "ahead; use --build-jobs with brute_force, random, grid or --configs"
        )
    return strategy_type, listed


def _checked_budget(budget: Budget | int | None) -> Budget:
    """``budget`` as a Budget (an int is a number of evaluations); no limit when None."""
    if isinstance(budget, int):
        budget = Budget(max_evals=budget)
    budget = budget or Budget()
    if budget.max_evals is not None and budget.max_evals < 1:
        raise PerfportError(f"budget must be at least 1 evaluation, got {budget.max_evals}")
    return budget


def _legal_space(
    spec: KernelSpec, problem: Problem, device: DeviceInfo, min_work_groups: bool
) -> Space:
    """The kernel's space pruned for ``device``; an error saying what pruned it when empty."""
    space = kernel_space(spec, problem, device, min_work_groups)
    if not space.report.legal:
        removed = [f"{label} ({n})" for label, n, _ in space.report.removed_by if n]
        hint = empty_space_hint(space.report)
        raise SpecError(
            f"kernel {spec.name}: no configuration is legal for this problem on {device.id}; "
            f"removed by: {', '.join(removed) or 'nothing'}; "
            + (f"{hint}; " if hint else "")
            + "see 'perfport space'"
        )
    return space


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
) -> Strategy:
    """The strategy of this session; a listed configuration outside ``space`` is left out (it
    is stored as pruned after the search)."""
    if listed is None:
        return make_strategy(strategy_type, space, seed, prior.scores if prior else None)
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
