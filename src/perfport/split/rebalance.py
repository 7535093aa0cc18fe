"""Adaptive rebalancing (beyond erdem2018): for repeated launches, re-plan the split from the
part times measured in the previous launch until the devices finish within a tolerance of
each other.

Each device's time is modelled as a line in the elements it runs, overhead + cost x elements,
through its time alone on the whole problem and its last part's time; the shares that make
every line end together are planned with Eqs. 5-9, so every re-split keeps each device's
work-group size whole. The overhead term is what Eq. 4 leaves out: a device whose overhead
alone exceeds the balanced time is given nothing (a small part on a CPU beside a GPU costs
its launch, however few its elements)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Check, Config, DeviceInfo, KernelSpec, Problem, SpecError, SplitDim
from perfport.devices import open_session
from perfport.measure.verify import Comparison
from perfport.split.execute import GroupOpener, Opener, Part, RunResult, run_parts
from perfport.split.legal import refusal
from perfport.split.plan import SplitPlan, plan_split


@dataclass(frozen=True)
class Iteration:
    """One launch of the rebalancing loop: the parts it ran and what it measured."""

    parts: tuple[tuple[int, int], ...]
    run: RunResult
    imbalance: float  # slowest part's kernel time over the fastest's, less 1
    verified: bool  # the comparison found no mismatch
    check: Check = Check.VERIFIED  # UNVERIFIED: nothing compared (every output ignored)

    def to_json(self) -> dict[str, Any]:
        return {
            "parts": [list(p) for p in self.parts],
            "measured_ms": self.run.wall_ms,
            "part_kernel_ms": list(self.run.kernel_ms),
            "imbalance": self.imbalance,
            # one device given the whole extent (a balanced split slower than it alone)
            "single_device": len(self.run.kernel_ms) == 1,
            "verified": self.verified and self.check is Check.VERIFIED,
            "verification": self.check.value,
            "buffers": self.run.buffers.to_json(),
        }


def device_line(
    extent: int, alone_ms: float | None, elements: int, part_ms: float
) -> tuple[float, float]:
    """(overhead ms, ms per element) through (extent, alone_ms) and (elements, part_ms). When
    the two points are too close to tell a slope, or the fit goes negative, or there is no
    measured time alone (None: a model's time is no point to fit through), the line is
    proportional through the part (Eq. 4's assumption)."""
    if alone_ms is None:
        return 0.0, part_ms / elements
    if elements <= 0:
        return 0.0, alone_ms / extent
    apart = extent - elements
    slope = (alone_ms - part_ms) / apart if apart >= 0.05 * extent else 0.0
    overhead = part_ms - slope * elements
    if slope <= 0 or overhead < 0:
        return 0.0, part_ms / elements
    return overhead, slope


def balanced_finish(extent: int, lines: Sequence[tuple[float, float]]) -> float:
    """The time T at which every device that gets any elements finishes together, with
    sum((T - overhead) / cost) = extent over the devices whose overhead is below T (found by
    bisection: the sum grows with T)."""

    def covered(t: float) -> float:
        return sum(max(0.0, (t - a) / b) for a, b in lines)

    low, high = 0.0, min(a + b * extent for a, b in lines)  # the best single device
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if covered(mid) < extent else (low, mid)
    return high


def balanced_shares(extent: int, lines: Sequence[tuple[float, float]]) -> tuple[float, ...]:
    """The shares of ``extent`` under which every device that gets any finishes at the same
    time (``balanced_finish``)."""
    finish = balanced_finish(extent, lines)
    elements = [max(0.0, (finish - a) / b) for a, b in lines]
    total = sum(elements)
    return tuple(e / total for e in elements)


def updated_lines(
    plan: SplitPlan,
    run: RunResult,
    alone_ms: Sequence[float | None],
    lines: Sequence[tuple[float, float]],
) -> list[tuple[float, float]]:
    """Each device's line through its time alone and its part in ``run``; a device that ran
    nothing keeps its line, so one dropped for its overhead stays dropped."""
    ran, out = iter(run.kernel_ms), list(lines)
    for i, (t, (a, b)) in enumerate(zip(alone_ms, plan.parts, strict=True)):
        if b > a:
            out[i] = device_line(plan.extent, t, b - a, next(ran))
    return out


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
    opener: Opener = open_session,
    lines: Sequence[tuple[float, float]] | None = None,
    device_ms: Sequence[float | None] | None = None,
    group: GroupOpener | None = None,
    best_alone_ms: float | None = None,
) -> tuple[tuple[Iteration, ...], SplitPlan]:
    """Launch, re-plan from the measured part times, launch again: up to ``iterations``
    launches, stopping once the parts finish within ``tolerance`` of each other and the launch
    is no slower than the fastest device alone (else that device alone is tried last). Returns the
    launches and the plan of the last one. ``first``, when given, is the plan's launch already
    made (``perfport split``'s static run): it counts as the first iteration. ``lines``, when
    given, are each device's (overhead ms, ms per element) so far (``--plan lines``' fit):
    without them a device starts proportional to its time alone, and one the lines dropped
    would get its Eq. 4 share back. ``device_ms``: each device's kernel time alone, the kind of
    time a part's is, for the lines (else the plan's wall times alone; None: a device with
    no measured time alone, whose line is proportional through its last part).
    ``best_alone_ms``: the fastest device's measured wall time alone, which a balanced launch
    must not exceed (else its time in the plan: a stored or predicted time is no wall time,
    and a roofline's, several times fast, would send every balanced split to that device)."""
    if iterations < 1:
        raise SpecError(f"--iterations {iterations}: give at least 1")
    alone_ms = plan.times_ms
    line_ms = list(device_ms) if device_ms is not None else list(alone_ms)
    lines = (
        list(lines)
        if lines
        else [  # a device with no measured time starts from the plan's
            (0.0, (a if k is None else k) / plan.extent)
            for k, a in zip(line_ms, alone_ms, strict=True)
        ]
    )
    done: list[Iteration] = []
    comparison = Comparison.of(spec, problem)  # tune's: ignored outputs, atol/rtol, verify=
    fastest = min(range(len(alone_ms)), key=lambda i: alone_ms[i])
    slowest_ok = (alone_ms[fastest] if best_alone_ms is None else best_alone_ms) * (1 + tolerance)
    for k in range(iterations):
        if k and done[-1].imbalance <= tolerance:
            # Balanced, yet slower than the fastest device alone: what the part times miss
            # (a CPU part taking the host cores the GPU's launches need) makes the split
            # lose, so the last launch tries that device alone.
            shares = tuple(float(i == fastest) for i in range(len(alone_ms)))
        elif k:
            lines = updated_lines(plan, done[-1].run, line_ms, lines)
            shares = balanced_shares(plan.extent, lines)
        again = (
            plan_split(plan.devices, plan.extent, plan.blocks, alone_ms, plan.dimension, shares)
            if k
            else plan
        )
        parts = [
            Part(d, c, a, b) for d, c, (a, b) in zip(devices, configs, again.parts, strict=True)
        ]
        if k and refusal(spec, problem, split, parts):
            break  # a part could not launch (a leftover not in whole groups): keep what ran
        plan = again
        run = (
            first
            if k == 0 and first is not None
            else run_parts(
                spec, problem, parts, split, target_s=target_s, opener=opener, group=group
            )
        )
        ok = comparison.mismatch(run.outputs, expected) is None
        done.append(Iteration(plan.parts, run, imbalance(run), ok, comparison.check(expected)))
        alone = len(run.kernel_ms) == 1
        if alone or (done[-1].imbalance <= tolerance and run.wall_ms <= slowest_ok):
            break
    return tuple(done), plan
