"""``perfport split``: choose each device's configuration, time each device alone (or take its
time from the store or a model, ``perfport.split.times``), plan the split (Eqs. 4-9,
Algorithm 1), run it across the devices, verify it against the spec's numpy reference (else
the best single device's output), decide, and store the plan with what was measured."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfport._core import Check, Config, DeviceInfo, Expr, KernelSpec, Problem, SpecError, SplitDim
from perfport.measure.data import reference_outputs
from perfport.measure.verify import Comparison
from perfport.space import kernel_space
from perfport.split.execute import SEED, Opener, Part, RunResult, run_parts
from perfport.split.plan import SplitPlan, plan_split
from perfport.split.probe import LinesPlan, check_plan, eq4_json, probe_plan
from perfport.split.rebalance import Iteration, rebalance
from perfport.split.reserve import Opening, cpu_opening
from perfport.split.sweep import SweepPoint, check_sweep, sweep
from perfport.split.times import TimeSource, given_times, problem_args, spec_results
from perfport.store import Store

# A split must beat the best single device by this share to be chosen (the launches' noise).
DECISION_MARGIN = 0.03


@dataclass(frozen=True)
class SplitOutcome:
    """One ``perfport split``: the plan that ran, each device's configuration (and where it
    came from: ``store`` or ``default``), the single-device and split runs and the decision.
    ``lines``, when the split was planned from each device's line (``--plan lines``), holds
    Eq. 4's plan, the probes and the lines; ``plan`` is then the plan made from them.
    ``time_source``: where the plan's times (``eq4.times_ms``) came from; ``single`` holds
    each device's run alone, None for a device not run alone (times not measured: only the
    device given the smallest time runs alone)."""

    plan: SplitPlan
    devices: tuple[DeviceInfo, ...]
    configs: tuple[Config, ...]
    config_sources: tuple[str, ...]
    single: tuple[RunResult | None, ...]
    run: RunResult
    verified: bool
    mismatch: str | None
    check: Check = Check.VERIFIED  # UNVERIFIED: nothing compared (every output ignored)
    sweep: tuple[SweepPoint, ...] = ()
    iterations: tuple[Iteration, ...] = ()
    rebalanced: SplitPlan | None = None
    opening: Opening = field(default_factory=Opening)
    lines: LinesPlan | None = None
    time_source: TimeSource = TimeSource.MEASURED
    verified_against: str = "best single device"  # or "numpy reference"

    @property
    def eq4(self) -> SplitPlan:
        """Eq. 4's plan: the one that ran, unless the lines planned it."""
        return self.lines.eq4 if self.lines else self.plan

    @property
    def best_single(self) -> int:
        """The fastest device that ran alone (a split must beat a measured time to win)."""
        ran = [i for i in range(len(self.devices)) if self._alone_runs(i)]
        return min(ran, key=lambda i: self._alone(i).wall_ms)

    def _alone_runs(self, i: int) -> list[RunResult]:
        """Device ``i``'s measured runs of the whole extent: its run alone, and the verified
        sweep points that gave it everything (with times given, the device planned slower
        never runs alone, but a sweep may show it the faster)."""
        alone = self.single[i]
        whole = [p.run for p in self.sweep if p.verified and _only_part(p.parts) == i]
        return ([alone] if alone is not None else []) + whole

    def _alone(self, i: int) -> RunResult:
        runs = self._alone_runs(i)
        if not runs:
            raise SpecError(f"{self.devices[i].id} did not run alone")
        return min(runs, key=lambda r: r.wall_ms)

    @property
    def chosen(self) -> tuple[tuple[tuple[int, int], ...], RunResult] | None:
        """The fastest verified split over two or more devices, its parts and run: the
        planned run or a rebalanced launch (None: none)."""
        tried = [(self.plan.parts, self.run, self.verified)] + [
            (i.parts, i.run, i.verified) for i in self.iterations
        ]
        runs = [(p, r) for p, r, ok in tried if ok and len(r.kernel_ms) > 1]
        return min(runs, key=lambda pr: pr[1].wall_ms, default=None)

    @property
    def split_ms(self) -> float:
        """The fastest verified split's time (inf: none)."""
        chosen = self.chosen
        return chosen[1].wall_ms if chosen else float("inf")

    @property
    def decision(self) -> str:
        """ "split" when the fastest verified split beat the best single device by more than
        ``DECISION_MARGIN``, else that device. The margin keeps a tie on one device: a split
        launch timed over a few rounds that comes out a fraction of a percent ahead is noise
        (the GPU run's CPU+GPU convolution: a rebalanced launch at 11.05 ms against 11.08
        alone decided "split" for a plan that ran 14.49). A wrong split never wins."""
        if self.split_ms < self._alone(self.best_single).wall_ms * (1 - DECISION_MARGIN):
            return "split"
        return self.devices[self.best_single].id

    def _configs_json(self) -> list[dict[str, Any]]:
        """Each device's configuration and the time the plan took for it (``time_ms``: its
        time alone when measured), with its wall time alone where it ran alone."""
        rows = zip(
            self.devices, self.configs, self.config_sources, self.eq4.times_ms, self.single,
            strict=True,
        )  # fmt: skip
        return [
            {
                "device": d.id, "config": dict(c), "source": s, "time_ms": t,
                "time_source": self.time_source.value,
                "alone_ms": None if r is None else r.wall_ms,
            }
            for d, c, s, t, r in rows
        ]  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        best = self._alone(self.best_single)
        chosen = self.chosen
        return {
            "devices": [d.id for d in self.devices],
            "times": self.time_source.value,
            "configs": self._configs_json(),
            "dimension": self.plan.dimension,
            "extent": self.plan.extent,
            "split_factors": list(self.eq4.split_factors),
            "adjusted_factors": list(self.plan.adjusted_factors),
            "parts": [list(p) for p in self.plan.parts],
            "theoretical_ms": self.eq4.theoretical_ms,
            "adjusted_theoretical_ms": self.plan.adjusted_theoretical_ms,
            "measured_ms": self.run.wall_ms,
            "part_kernel_ms": list(self.run.kernel_ms),
            "split_ms": self.run.split_ms,
            "gather_ms": self.run.gather_ms,
            "buffers": self.run.buffers.to_json(),
            "best_single": {"device": self.devices[self.best_single].id, "time_ms": best.wall_ms},
            "speedup_over_best_single": best.wall_ms / self.run.wall_ms,
            # false when nothing was compared, though such a split may be chosen (as tune
            # ranks unverified results): "verification" says which
            "verified": self.verified and self.check is Check.VERIFIED,
            "verification": self.check.value,
            "verified_against": self.verified_against,
            "mismatch": self.mismatch,
            "decision": self.decision,
            "decision_margin": DECISION_MARGIN,
            "chosen_parts": [list(p) for p in chosen[0]] if chosen else None,
            "chosen_ms": chosen[1].wall_ms if chosen else None,
            "sweep": [p.to_json() for p in self.sweep],
            "iterations": [i.to_json() for i in self.iterations],
            "rebalanced_factors": (
                list(self.rebalanced.adjusted_factors) if self.rebalanced else None
            ),
            **self.opening.to_json(self.devices),
            **(self.lines.to_json() if self.lines else eq4_json(self.plan)),
        }


def split_dimension(spec: KernelSpec, dimension: int | None) -> SplitDim:
    """The declared split along ``dimension`` (None: the first declared)."""
    if not spec.split:
        raise SpecError(
            f"kernel {spec.name} declares no split of its index space; give its KernelSpec a "
            "split in a .py spec (TOML and YAML specs cannot declare one; see docs/split.md), "
            "or run it on one device"
        )
    if dimension is None:
        return spec.split[0]
    for s in spec.split:
        if s.dimension == dimension:
            return s
    known = ", ".join(str(s.dimension) for s in spec.split)
    raise SpecError(
        f"kernel {spec.name} has no split along dimension {dimension}; give --dimension {known}"
    )


def choose_config(
    spec: KernelSpec,
    problem: Problem,
    device: DeviceInfo,
    store: Store | None,
    kernel_arg: str | None = None,
) -> tuple[Config, str]:
    """The device's best stored configuration for this problem (``perfport tune``), else the
    kernel's default, else its first legal configuration. ``kernel_arg`` names the kernel in
    the hint's command (the CLI's KERNEL: a spec file's path; default the spec's name)."""
    space = kernel_space(spec, problem, device)
    if not len(space):
        raise SpecError(
            f"no configuration of {spec.name} is legal on {device.id} at this problem; "
            f"see 'perfport space {shlex.quote(kernel_arg or spec.name)} --device {device.id} "
            f"--problem {problem_args(problem)}'"
        )
    if store is not None:
        for r in spec_results(store, spec, device):
            if r.problem == problem and r.best is not None and space.index(r.best) is not None:
                return r.best, "store"
    if spec.default is not None and space.index(spec.default) is not None:
        return spec.default, "default"
    return space.config(0), "first legal"


def distinct_ids(devices: Sequence[DeviceInfo]) -> list[str]:
    """The devices' ids; a split needs two or more different ones."""
    ids = [d.id for d in devices]
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise SpecError(
            "a split needs two or more different devices; give --device twice (on one CPU, "
            "its sub-devices opencl:0:0.0 and opencl:0:0.1)"
        )
    return ids


def chosen_configs(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    store: Store | None,
    configs: Mapping[str, Config] | None,
    kernel_arg: str | None = None,
) -> list[tuple[Config, str]]:
    """Each device's configuration and where it came from: ``configs`` by device id
    ("given"), else ``choose_config``."""
    return [
        (configs[d.id], "given") if configs and d.id in configs
        else choose_config(spec, problem, d, store, kernel_arg)
        for d in devices
    ]  # fmt: skip


def block(spec: KernelSpec, split: SplitDim, config: Config, problem: Problem) -> int:
    """Elements of the extent one work-group covers: its size along the dimension times the
    elements each work-item covers there."""
    env = spec.env(config, problem)
    local = int(spec.local_exprs[split.dimension].value(env))
    return local * int(Expr(split.granule, f"kernel {spec.name} split granule").value(env))


@dataclass(frozen=True)
class Alone:
    """The runs of the whole problem alone (None: a device not run) and what the plan takes
    from them: each device's time (``times_ms``), kernel time (``kernel_ms``, the kind of
    time a part's kernel is) and wall time (``wall_ms``) alone; None where a device did not
    run alone and its given time cannot stand in (a model's)."""

    single: tuple[RunResult | None, ...]
    times_ms: tuple[float, ...]
    kernel_ms: tuple[float | None, ...]
    wall_ms: tuple[float | None, ...]

    @property
    def best(self) -> RunResult:
        """The fastest single run: its outputs are what a split must reproduce, its wall
        time what a split must beat."""
        return min((r for r in self.single if r), key=lambda r: r.wall_ms)


def run_alone(
    spec: KernelSpec,
    full: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    extent: int,
    given: Sequence[float] | None,
    target_s: float,
    opener: Opener,
    stand_in: bool,
) -> Alone:
    """Run the whole problem alone: on every device when no times are ``given`` (their wall
    times plan the split), else only on the device given the smallest time. That run's output
    verifies the split and its measured time is the best single one the split must beat, so
    the decision compares with a measured device, never with a prediction. ``stand_in``:
    whether a given time may stand for a device's times alone where it did not run."""
    ran = range(len(devices)) if given is None else [min(range(len(given)), key=given.__getitem__)]
    single: list[RunResult | None] = [None] * len(devices)
    for i in ran:
        part = Part(devices[i], configs[i], 0, extent)
        single[i] = run_parts(spec, full, [part], None, target_s=target_s, opener=opener)
    times = tuple(given) if given is not None else tuple(r.wall_ms for r in single if r)
    stood = [t if stand_in else None for t in times]  # where a device did not run alone
    kernel = tuple(s if r is None else r.kernel_ms[0] for r, s in zip(single, stood, strict=True))
    wall = tuple(s if r is None else r.wall_ms for r, s in zip(single, stood, strict=True))
    return Alone(tuple(single), times, kernel, wall)


def split_run(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    dimension: int | None = None,
    store: Store | None = None,
    configs: Mapping[str, Config] | None = None,
    target_s: float = 0.2,
    sweep_points: int = 0,
    iterations: int = 0,
    opening: Opening | None = None,
    plan_from: str = "lines",
    time_source: TimeSource | str = TimeSource.MEASURED,
    times: Mapping[str, float] | None = None,
    kernel_arg: str | None = None,
) -> SplitOutcome:
    """Plan, run and verify ``spec`` split across ``devices`` (configurations: ``configs`` by
    device id, else from ``store``, else the default); with ``sweep_points``, also run the
    split at that many shares of the first device; with ``iterations``, rebalance from the
    measured part times for up to that many launches (the planned run is the first).
    ``opening``: how each part's session opens (default: a CPU beside GPUs leaves one core
    per GPU, ``perfport.split.reserve``); the CPU runs alone on the same compute units.
    ``plan_from``: ``lines`` (default) runs the plan made from each device's line after a
    probe of Eq. 4's parts (``perfport.split.probe``); ``eq4`` runs Eq. 4's plan.
    ``time_source``: each device's time for the plan, ``measured`` (each runs the whole
    problem alone), ``store`` or ``model`` (``perfport.split.times``); ``times``, each
    device's time by id (any model's), plans instead (``given``): then only the device given
    the smallest time runs alone. ``kernel_arg``: the kernel as hints name it (the CLI's)."""
    check_plan(plan_from)
    source = TimeSource.GIVEN if times is not None else TimeSource.parse(time_source)
    ids = distinct_ids(devices)
    opening = opening or cpu_opening(devices)
    split = split_dimension(spec, dimension)
    full = spec.problem.merged(problem)
    chosen = chosen_configs(spec, full, devices, store, configs, kernel_arg)
    picked = [c for c, _ in chosen]
    given = given_times(source, spec, full, devices, picked, store, times, kernel_arg)
    extent = int(full[split.extent])
    # The lines go through each device's kernel time alone; a device not run alone stands in
    # with its stored time (the same kind: tune's median kernel time), not a model's: on an
    # H200 beside a 32-core Xeon the roofline was 3.1x (Xeon) and 7.3x (GPU) below the
    # convolution's times, and a line through it gave the Xeon 2.4x what it could finish.
    stand_in = source is TimeSource.STORE
    blocks = [block(spec, split, c, full) for c in picked]
    if sweep_points:  # refused before anything runs, not after the split
        check_sweep(spec, full, devices, picked, split, blocks, sweep_points)
    alone = run_alone(spec, full, devices, picked, extent, given, target_s, opening.one, stand_in)
    plan = plan_split(ids, extent, blocks, alone.times_ms, split.dimension)
    lines = None
    if plan_from == "lines":
        lines = probe_plan(spec, full, devices, picked, split, plan, target_s, opening.one,
                           alone.kernel_ms, opening.group, alone.wall_ms)  # fmt: skip
        plan = lines.plan
    parts = [Part(d, c, a, b) for d, c, (a, b) in zip(devices, picked, plan.parts, strict=True)]
    run = run_parts(
        spec, full, parts, split, target_s=target_s, opener=opening.one, group=opening.group
    )
    (expected, against), comparison = _expected(spec, full, alone.best), Comparison.of(spec, full)
    problem_text = comparison.mismatch(run.outputs, expected)
    points: tuple[SweepPoint, ...] = ()
    if sweep_points:
        points = sweep(
            spec, full, devices, picked, split, blocks, sweep_points, expected,
            target_s, opening.one, opening.group,
        )  # fmt: skip
    launches: tuple[Iteration, ...] = ()
    last: SplitPlan | None = None
    if iterations:  # the rebalancer starts from the plan that ran, and from its lines
        launches, last = rebalance(
            spec, full, devices, picked, split, plan, iterations, expected, run,
            opener=opening.one, lines=lines.lines if lines else None,
            device_ms=alone.kernel_ms, group=opening.group, best_alone_ms=alone.best.wall_ms,
        )  # fmt: skip
    return SplitOutcome(
        plan=plan, devices=tuple(devices), configs=tuple(picked),
        config_sources=tuple(s for _, s in chosen), single=alone.single, run=run,
        verified=problem_text is None, mismatch=problem_text, check=comparison.check(expected),
        sweep=points, iterations=launches, rebalanced=last, opening=opening, lines=lines,
        time_source=source, verified_against=against,
    )  # fmt: skip


def _expected(
    spec: KernelSpec, full: Problem, best: RunResult
) -> tuple[dict[str, np.ndarray], str]:
    """What the split's outputs must equal, and what that is: the spec's numpy reference for
    the seeded inputs where it has one (``run_parts``' seed), so that a device whose
    configuration is wrong alone cannot pass its error on to the split; else the best single
    device's output."""
    if spec.reference is None:
        return best.outputs, "best single device"
    return reference_outputs(spec, full, SEED), "numpy reference"


def _only_part(parts: Sequence[tuple[int, int]]) -> int | None:
    """The device given the whole extent, when every other part is empty."""
    busy = [i for i, (start, stop) in enumerate(parts) if stop > start]
    return busy[0] if len(busy) == 1 else None
