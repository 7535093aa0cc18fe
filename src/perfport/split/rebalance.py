"""Adaptive rebalancing (beyond erdem2018): for repeated launches, re-plan the split from the
part times measured in the previous launch until the devices finish within a tolerance of
each other.

Each device's whole-problem time is estimated from its last part (its kernel time over the
share it ran) and fed to the same plan (Eqs. 4-9), so every re-split keeps each device's
work-group size whole. A device left with no elements keeps its previous estimate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Config, DeviceInfo, KernelSpec, Problem, SpecError, SplitDim
from perfport.measure.verify import mismatch
from perfport.split.execute import Part, RunResult, run_parts
from perfport.split.plan import SplitPlan, plan_split


@dataclass(frozen=True)
class Iteration:
    """One launch of the rebalancing loop: the parts it ran and what it measured."""

    parts: tuple[tuple[int, int], ...]
    run: RunResult
    imbalance: float  # slowest part's kernel time over the fastest's, less 1
    verified: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "parts": [list(p) for p in self.parts],
            "measured_ms": self.run.wall_ms,
            "part_kernel_ms": list(self.run.kernel_ms),
            "imbalance": self.imbalance,
            "verified": self.verified,
        }


def estimated_times(
    plan: SplitPlan, parts: Sequence[tuple[int, int]], run: RunResult
) -> tuple[float, ...]:
    """Each device's whole-problem time as its last part predicts it: kernel time x extent /
    elements; the plan's time for a device that ran nothing."""
    times, ran = list(plan.times_ms), iter(run.kernel_ms)
    for i, (a, b) in enumerate(parts):
        if b > a:
            times[i] = next(ran) * plan.extent / (b - a)
    return tuple(times)


def imbalance(run: RunResult) -> float:
    busy = [t for t in run.kernel_ms if t > 0]
    return max(busy) / min(busy) - 1.0 if len(busy) > 1 else 0.0


def rebalance(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    split: SplitDim,
    plan: SplitPlan,
    iterations: int,
    expected: dict[str, Any],
    first: RunResult | None = None,
    tolerance: float = 0.03,
    target_s: float = 0.05,
) -> tuple[tuple[Iteration, ...], SplitPlan]:
    """Launch, re-plan from the measured part times, launch again: up to ``iterations``
    launches, stopping once the parts finish within ``tolerance`` of each other. Returns the
    launches and the plan of the last one. ``first``, when given, is the plan's launch already
    made (``perfport split``'s static run): it counts as the first iteration."""
    if iterations < 1:
        raise SpecError(f"--iterations {iterations}: give at least 1")
    done: list[Iteration] = []
    for k in range(iterations):
        if k:
            times = estimated_times(plan, plan.parts, done[-1].run)
            plan = plan_split(plan.devices, plan.extent, plan.blocks, times, plan.dimension)
        parts = [
            Part(d, c, a, b) for d, c, (a, b) in zip(devices, configs, plan.parts, strict=True)
        ]
        run = (
            first
            if k == 0 and first is not None
            else run_parts(spec, problem, parts, split, target_s=target_s)
        )
        wrong = mismatch(run.outputs, expected, spec.tolerance)
        done.append(Iteration(plan.parts, run, imbalance(run), wrong is None))
        if done[-1].imbalance <= tolerance:
            break
    return tuple(done), plan
