"""Planning the first split from each device's overhead + cost line (beyond erdem2018).

Eq. 4 takes a device's time as proportional to its part. A small part on a CPU beside a GPU
pays a fixed cost per launch (threads starting and joining, work handed out) that the
proportion omits, so the planned split runs over Algorithm 1's time until rebalancing
corrects it. Here the devices first run their Eq. 4 parts together, as the split will (one
probe launch series); each device's line goes through (extent, time alone) and (part, its part's
time in the probe) (``device_line``), and the shares that make every line end together
(``balanced_shares``) are planned with Eqs. 5-9, so work-groups stay whole. A device whose
overhead alone exceeds the balanced time gets nothing.

The probe runs the parts together, not one by one: on the GPU machine a CPU's part took 11-20%
longer per element beside a busy GPU than alone, and a line through the part's time alone
planned the CPU too much
(docs/results/2026-11-26-split-lines-h200.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Config, DeviceInfo, KernelSpec, Problem, SpecError, SplitDim
from perfport.devices import open_session
from perfport.split.execute import GroupOpener, Opener, Part, run_parts
from perfport.split.plan import SplitPlan, plan_split
from perfport.split.rebalance import balanced_shares, device_line

PLANS = ("eq4", "lines")  # what ``perfport split --plan`` takes


@dataclass(frozen=True)
class LinesPlan:
    """The plan made from lines: Eq. 4's plan it started from, each device's probe time on its
    Eq. 4 part (None: an empty part, not probed; its line is proportional), the fitted lines
    (overhead ms, ms per element) and the plan made from them."""

    eq4: SplitPlan
    probe_ms: tuple[float | None, ...]
    lines: tuple[tuple[float, float], ...]
    plan: SplitPlan

    @property
    def predicted_ms(self) -> float:
        """The lines' time for the plan's parts: the last device with elements to finish."""
        ends = [
            a + b * (stop - start)
            for (a, b), (start, stop) in zip(self.lines, self.plan.parts, strict=True)
            if stop > start
        ]
        return max(ends, default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "planned_from": "lines",
            "eq4_parts": [list(p) for p in self.eq4.parts],
            "probe_ms": list(self.probe_ms),
            "lines": [list(line) for line in self.lines],
            "lines_predicted_ms": self.predicted_ms,
        }


def eq4_json(plan: SplitPlan) -> dict[str, Any]:
    """The same keys for a split planned with Eq. 4 alone: no probe, no lines."""
    return {
        "planned_from": "eq4",
        "eq4_parts": [list(p) for p in plan.parts],
        "probe_ms": None,
        "lines": None,
        "lines_predicted_ms": None,
    }


def check_plan(plan_from: str) -> None:
    if plan_from not in PLANS:
        raise SpecError(f"--plan {plan_from!r}: give one of {', '.join(PLANS)}")


def plan_from_lines(
    eq4: SplitPlan,
    probe_ms: Sequence[float | None],
    device_ms: Sequence[float | None] | None = None,
    wall_ms: Sequence[float | None] | None = None,
) -> LinesPlan:
    """The lines through each device's time alone and its probe on its Eq. 4 part, and the
    whole-work-group plan whose parts every line ends together. The time alone is
    ``device_ms`` (each device's kernel time on the whole problem: the probe's kind of time)
    where given, else ``eq4.times_ms``. With ``device_ms``, each line's overhead also holds
    the device's host time alone (its wall time less its kernel time: handing out the launch,
    noticing it end), so the lines end when the host sees each part done. The wall time is
    ``wall_ms`` where given (a plan from stored or predicted times: ``eq4.times_ms`` is then
    no wall time), else ``eq4.times_ms``. A device whose ``device_ms`` is None has no
    measured time alone (a model's prediction stood for it): its line is proportional through
    its probe, with no host time."""
    if len(probe_ms) != len(eq4.devices):
        raise SpecError("give one probe time (or None) per device")
    alone_ms = eq4.times_ms if device_ms is None else tuple(device_ms)
    walls = eq4.times_ms if wall_ms is None else tuple(wall_ms)
    lines: list[tuple[float, float]] = []
    rows = zip(alone_ms, walls, eq4.times_ms, eq4.parts, probe_ms, strict=True)
    for alone, wall, planned, (a, b), t in rows:
        if t is None:  # not probed (no elements): the proportional line of 0 elements
            lines.append(device_line(eq4.extent, planned if alone is None else alone, 0, 0.0))
            continue
        overhead, cost = device_line(eq4.extent, alone, b - a, t)
        host = 0.0 if alone is None or wall is None else max(0.0, wall - alone)
        lines.append((overhead + host, cost))
    shares = balanced_shares(eq4.extent, lines)
    plan = plan_split(
        eq4.devices, eq4.extent, eq4.blocks, eq4.times_ms, eq4.dimension, factors=shares
    )
    return LinesPlan(eq4=eq4, probe_ms=tuple(probe_ms), lines=tuple(lines), plan=plan)


def probe_plan(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    split: SplitDim,
    eq4: SplitPlan,
    target_s: float = 0.2,
    opener: Opener = open_session,
    device_ms: Sequence[float | None] | None = None,
    group: GroupOpener | None = None,
    wall_ms: Sequence[float | None] | None = None,
) -> LinesPlan:
    """Run Eq. 4's parts together (the ``run_parts`` call a split makes), then plan from the
    lines through each part's kernel time (``plan_from_lines``); an empty part is not run."""
    live = [i for i, (a, b) in enumerate(eq4.parts) if b > a]
    parts = [Part(devices[i], configs[i], *eq4.parts[i]) for i in live]
    run = run_parts(spec, problem, parts, split, target_s=target_s, opener=opener, group=group)
    probes: list[float | None] = [None] * len(devices)
    for i, ms in zip(live, run.kernel_ms, strict=True):
        probes[i] = ms
    return plan_from_lines(eq4, probes, device_ms, wall_ms)
