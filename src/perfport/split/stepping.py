"""``perfport split --steps N``: time-stepping across devices, set against all N steps on
each device alone. Each device's per-step time alone plans the split (Eqs. 4-9); with
rebalancing, the split is planned again between steps from the parts' measured kernel
times (``rebalance``'s overhead + cost-per-element lines) and the rows that change owner
move between the devices."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfport._core import Check, Config, DeviceInfo, KernelSpec, Problem, SpecError, SplitDim
from perfport.measure.verify import Comparison
from perfport.split.execute import Opener, Part
from perfport.split.halo import Range, check_feeds
from perfport.split.legal import refusal
from perfport.split.payoff import element_bytes, payoff
from perfport.split.plan import SplitPlan, plan_split
from perfport.split.rebalance import balanced_shares, device_line
from perfport.split.reserve import Opening, cpu_opening
from perfport.split.split import (
    DECISION_MARGIN,
    block,
    chosen_configs,
    distinct_ids,
    split_dimension,
)
from perfport.split.steps import Replan, Step, StepsResult, run_steps
from perfport.store import Store


@dataclass(frozen=True)
class StepsOutcome:
    """A time-stepping split: the plan (from per-step times alone), each device's
    configuration, all steps on each device alone, the split run and its verification."""

    plan: SplitPlan
    devices: tuple[DeviceInfo, ...]
    configs: tuple[Config, ...]
    config_sources: tuple[str, ...]
    single: tuple[StepsResult, ...]
    run: StepsResult
    verified: bool
    mismatch: str | None
    check: Check = Check.VERIFIED  # UNVERIFIED: nothing compared (every output ignored)
    opening: Opening = field(default_factory=Opening)

    @property
    def best_single(self) -> int:
        return min(range(len(self.single)), key=lambda i: self.single[i].total_ms)

    @property
    def split_ran(self) -> bool:
        """Whether two or more devices had work in some step (a plan can give one device
        every row: then the run is that device alone, not a split)."""
        return any(sum(b > a for a, b in s.parts) > 1 for s in self.run.steps)

    @property
    def decision(self) -> str:
        """ "split" when the verified split's steps, with two or more devices at work
        (``split_ran``), beat the best single device's by more than ``DECISION_MARGIN``, else
        that device's id (as a single launch's ``SplitOutcome.chosen`` counts only a split
        over two or more devices)."""
        best = self.single[self.best_single].total_ms
        faster = self.run.total_ms < best * (1 - DECISION_MARGIN)
        if self.verified and self.split_ran and faster:
            return "split"
        return self.devices[self.best_single].id

    def to_json(self) -> dict[str, Any]:
        best = self.single[self.best_single]
        final = self.run.steps[-1].parts
        return {
            "devices": [d.id for d in self.devices],
            "configs": [
                {
                    "device": d.id,
                    "config": dict(c),
                    "source": s,
                    "time_ms": r.total_ms,
                    "step_ms": r.step_ms,
                }
                for d, c, s, r in zip(
                    self.devices, self.configs, self.config_sources, self.single, strict=True
                )
            ],
            "dimension": self.plan.dimension,
            "extent": self.plan.extent,
            "steps": len(self.run.steps),
            "split_factors": list(self.plan.split_factors),
            "adjusted_factors": list(self.plan.adjusted_factors),
            "parts": [list(p) for p in self.plan.parts],
            "theoretical_ms": self.plan.theoretical_ms * len(self.run.steps),
            "theoretical_step_ms": self.plan.theoretical_ms,
            "measured_ms": self.run.total_ms,
            "step_ms": self.run.step_ms,
            "exchange_ms": self.run.exchange_ms,
            "moved_ms": sum(s.moved_ms for s in self.run.steps),
            "split_ms": self.run.setup_ms,
            "gather_ms": self.run.gather_ms,
            "per_step": [s.to_json() for s in self.run.steps],
            "final_parts": [list(p) for p in final],
            "best_single": {
                "device": self.devices[self.best_single].id,
                "time_ms": best.total_ms,
                "step_ms": best.step_ms,
            },
            "speedup_over_best_single": best.total_ms / self.run.total_ms,
            # false when nothing was compared, though such a split may be chosen (as tune
            # ranks unverified results): "verification" says which
            "verified": self.verified and self.check is Check.VERIFIED,
            "verification": self.check.value,
            "mismatch": self.mismatch,
            "decision": self.decision,
            "halo_path": self.run.halo_path.value,
            "halo_device_bytes": sum(s.exchange_device_bytes for s in self.run.steps),
            "buffers": self.run.buffers.to_json(),
            **self.opening.to_json(self.devices),
        }


def rebalancer(
    plan: SplitPlan,
    tolerance: float = 0.03,
    window: int = 3,
    steps: int | None = None,
    row_bytes: int = 0,
    first_move_ms: float = 0.0,
    legal: Callable[[Sequence[Range]], bool] | None = None,
) -> Replan:
    """A ``Replan`` that re-plans once the last ``window`` steps on the same parts show
    their median kernel times more than ``tolerance`` apart and further apart than their
    step-to-step noise: each device's line through its time alone and its part's median,
    the shares under which the lines end together, and Eqs. 5-9 for whole work-groups
    (``perfport.split.rebalance``). Given ``steps`` (the run's count) and ``row_bytes`` (the
    bytes a re-split moves per element), it re-splits only when the predicted saving over
    the remaining steps exceeds the move's predicted cost at the measured transfer rate, the
    first move's rebuilds counted as ``first_move_ms`` (``perfport.split.payoff``). ``legal``
    says whether every part of a re-split may launch; one that may not is not made."""
    lines = [(0.0, t / plan.extent) for t in plan.times_ms]

    def replan(done: Sequence[Step]) -> Sequence[Range] | None:
        same = done[-window:]
        if len(same) < window or any(s.parts != done[-1].parts for s in same):
            return None  # too few steps on these parts to tell noise from imbalance
        medians = [statistics.median(s.kernel_ms[i] for s in same) for i in range(len(lines))]
        busy = [t for t in medians if t > 0]
        if len(busy) < 2 or max(busy) / min(busy) - 1 <= tolerance:
            return None
        for i, (a, b) in enumerate(done[-1].parts):
            if b > a:
                lines[i] = device_line(plan.extent, plan.times_ms[i], b - a, medians[i])
        shares = balanced_shares(plan.extent, lines)
        again = plan_split(
            plan.devices, plan.extent, plan.blocks, plan.times_ms, plan.dimension, shares
        )
        if legal is not None and not legal(again.parts):
            return None  # a part could not launch at its size (a leftover not in whole groups)
        remaining = steps - len(done) if steps is not None else 0
        guess = payoff(done, window, again.parts, lines, remaining, row_bytes, first_move_ms)
        if guess.imbalance <= guess.noise or (steps is not None and not guess.pays):
            return None  # within the noise, or the move costs more than it would save
        return again.parts

    return replan


def step_split(spec: KernelSpec, problem: Problem, dimension: int | None) -> SplitDim:
    """The split to step along: ``dimension``'s, else the first declared that can step (a
    stencil's rows); raises SpecError (the first's reason) when none can."""
    env = spec.env({}, spec.problem.merged(problem))
    if dimension is not None:
        split = split_dimension(spec, dimension)
        check_feeds(spec, split, env)
        return split
    first = split_dimension(spec, None)
    for split in spec.split:
        try:
            check_feeds(spec, split, env)
            return split
        except SpecError:
            continue
    check_feeds(spec, first, env)  # raises with the first split's reason
    return first


def split_steps(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    steps: int,
    dimension: int | None = None,
    store: Store | None = None,
    configs: Mapping[str, Config] | None = None,
    rebalance: bool = False,
    opener: Opener | None = None,
    opening: Opening | None = None,
    kernel_arg: str | None = None,
) -> StepsOutcome:
    """Run ``steps`` steps of ``spec`` on each device alone, plan the split from their
    per-step times, run the steps split across ``devices`` (halo exchange between steps;
    with ``rebalance``, re-split between steps from the measured part times) and verify the
    outputs against the best single device's. Sessions open through ``opener`` one by one
    when given, else through ``opening`` (default ``cpu_opening``: one platform's devices
    share a context, so halos go device to device; a CPU beside GPUs leaves them cores).
    ``kernel_arg`` names the kernel in the commands hints print (the CLI's KERNEL)."""
    ids = distinct_ids(devices)
    opening = opening or cpu_opening(devices)
    group = None if opener else opening.group
    if steps < 1:
        raise SpecError(f"--steps {steps}: give 1 or more")
    split = step_split(spec, problem, dimension)
    full = spec.problem.merged(problem)
    chosen = chosen_configs(spec, full, devices, store, configs, kernel_arg)
    opener = opener or opening.one
    extent = int(full[split.extent])
    single = tuple(
        run_steps(spec, full, [Part(d, c, 0, extent)], split, steps, opener=opener, group=group)
        for d, (c, _) in zip(devices, chosen, strict=True)
    )
    blocks = [block(spec, split, c, full) for c, _ in chosen]
    plan = plan_split(ids, extent, blocks, [r.step_ms for r in single], split.dimension)
    parts = [
        Part(d, c, a, b) for d, (c, _), (a, b) in zip(devices, chosen, plan.parts, strict=True)
    ]
    env = spec.env(chosen[0][0], full)
    replan = (
        rebalancer(
            plan,
            steps=steps,
            row_bytes=element_bytes(spec, split, env),
            # a move opens parts as the setup did (kernels built, buffers filled): the
            # slowest device's setup alone bounds the first move's cost beyond its bytes
            first_move_ms=max(r.setup_ms for r in single),
            legal=lambda bounds: (
                not refusal(
                    spec,
                    full,
                    split,
                    [
                        Part(d, c, a, b)
                        for d, (c, _), (a, b) in zip(devices, chosen, bounds, strict=True)
                    ],
                )
            ),
        )
        if rebalance
        else None
    )
    run = run_steps(spec, full, parts, split, steps, replan, opener, group=group,
                    device_halos=opening.share_context)  # fmt: skip
    expected = min(single, key=lambda r: r.total_ms).outputs
    comparison = Comparison.of(spec, full)
    wrong = comparison.mismatch(run.outputs, expected)
    return StepsOutcome(
        plan=plan,
        devices=tuple(devices),
        configs=tuple(c for c, _ in chosen),
        config_sources=tuple(s for _, s in chosen),
        single=single,
        run=run,
        verified=wrong is None,
        mismatch=wrong,
        check=comparison.check(expected),
        opening=opening,
    )
