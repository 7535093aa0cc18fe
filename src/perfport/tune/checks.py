"""What ``tune`` checks and refuses before any device work: the problem, the listed
configurations, the strategy with compiling ahead, the budget, the legal space, the
objective and how many to re-time. Each error names the problem and the fix."""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from perfport._core import (
    Config,
    DeviceInfo,
    KernelSpec,
    ParamKind,
    PerfportError,
    Problem,
    SpecError,
)
from perfport._core.metrics import Objective, ResultMetrics
from perfport._core.problem_check import resolve_problem as resolve_problem  # its old home
from perfport.kernels import is_loopy_spec
from perfport.space import Space, empty_space_hint, kernel_space
from perfport.strategies import (
    Listed,
    Ranker,
    Strategy,
    is_own_strategy,
    make_strategy,
    strategy_class,
)
from perfport.tune.prebuild import refuse_in_spawned_import
from perfport.tune.result import Budget

# Compiling processes per core: on the 16-core GPU machine 60 beat 14 (2.5x vs 2.2x less wall
# time), so builds are not purely CPU-bound; far more only thrash.
MAX_BUILD_JOBS_PER_CORE = 4


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


def _chosen_strategy(
    spec: KernelSpec,
    problem: Problem,
    strategy: str | type[Strategy] | None,
    configs: Sequence[Mapping[str, Any]] | None,
    build_jobs: int,
) -> tuple[type[Strategy], tuple[Config, ...] | None]:
    """The strategy class, and the listed configurations when ``configs`` replaces the search;
    refuses what cannot run together before any device work starts."""
    if configs is not None and strategy is not None:
        raise PerfportError("give configurations to measure or a strategy, not both")
    listed = None if configs is None else _listed(spec, problem, configs)
    strategy_type = Listed if listed is not None else strategy_class(strategy)
    strategy_type.check_available()  # a missing extra: one line, before a campaign is opened
    refuse_in_spawned_import()
    if isinstance(build_jobs, bool) or not isinstance(build_jobs, int) or build_jobs < 0:
        raise PerfportError(
            f"build_jobs {build_jobs!r}: give a number of compiling processes >= 1, or 0 "
            "(the default) to compile each build as its trial needs it"
        )
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


def _checked_confirm_top(confirm_top: int) -> None:
    """``confirm_top``: 0 (no re-timing) or at least 2; one alone has nothing to be compared
    with, so it would silently re-time nothing."""
    if (
        isinstance(confirm_top, bool)
        or not isinstance(confirm_top, numbers.Integral)
        or (confirm_top < 0 or confirm_top == 1)
    ):
        raise PerfportError(
            f"confirm_top {confirm_top!r}: it re-times the N best side by side: give 0 (off) "
            "or at least 2"
        )


def _buildable(
    strategy_type: type[Strategy], space: Space, seed: int, ranker: Ranker | None = None
) -> None:
    """A strategy class of the user's own built once for ``space``, so that one that cannot be
    built (no ask(), another __init__) is refused before a campaign is opened."""
    if is_own_strategy(strategy_type):
        make_strategy(strategy_type, space, seed, None, ranker)


def _checked_budget(budget: Budget | int | None) -> Budget:
    """``budget`` as a Budget (an int is a number of evaluations); no limit when None."""
    if isinstance(budget, numbers.Integral) and not isinstance(budget, bool):
        budget = Budget(max_evals=int(budget))
    elif budget is not None and not isinstance(budget, Budget):
        raise PerfportError(
            f"budget {budget!r}: give a number of evaluations (an int) or a Budget, e.g. "
            "Budget(fraction=0.25) for a quarter of the space or Budget(max_seconds=60)"
        )
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
        # 'perfport space' refuses loopy kernels (only tune builds them): name what decides.
        see = (
            "pick a --problem the kernel's fits rule allows for some configuration"
            if is_loopy_spec(spec)
            else "see 'perfport space'"
        )
        raise SpecError(
            f"kernel {spec.name}: no configuration is legal for this problem on {device.id}; "
            f"removed by: {', '.join(removed) or 'nothing'}; " + (f"{hint}; " if hint else "") + see
        )
    return space


def unused_parameters(spec: KernelSpec) -> tuple[str, ...]:
    """Warnings for compile-time parameters the kernel never reads: each multiplies the space
    (and the builds) by its number of values for nothing. A source that includes other files
    or pastes tokens (``##``) may read them where this cannot see."""
    if "#include" in spec.source or "##" in spec.source:
        return ()
    texts = [*spec.global_size, *spec.local_size, spec.local_mem,
             *(v for _, v in spec.defines), *(v for _, v in spec.derived),
             *(str(getattr(a, field, "")) for a in spec.args
               for field in ("value", "count", "dtype", "shape"))]  # fmt: skip
    out = []
    for p in spec.params:
        if p.kind is ParamKind.LAUNCH or len(p.values) < 2:
            continue
        used = re.search(rf"\b{p.macro}\b", spec.source) or any(
            re.search(rf"\b{p.name}\b", str(t)) for t in texts
        )
        if not used:
            out.append(
                f"parameter {p.name}: the source never reads {p.macro}, so its "
                f"{len(p.values)} values multiply the space for nothing; drop it or use it"
            )
    return tuple(out)
