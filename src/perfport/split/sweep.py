"""Split-factor sweeps (erdem2018 Figures 5-7): the same two-device split run at a range of
shares, so the computed split can be set against the best one found by trying them all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Check, Config, DeviceInfo, KernelSpec, Problem, SpecError, SplitDim
from perfport.devices import open_session
from perfport.measure.verify import Comparison
from perfport.split.execute import GroupOpener, Opener, Part, RunResult, run_parts
from perfport.split.legal import refusal
from perfport.split.plan import adjust


@dataclass(frozen=True)
class SweepPoint:
    """One share tried: the first device's ``share`` of the extent (snapped to both devices'
    whole work-groups, ``two_parts``), the parts that gave, and what the run measured. ``ran_share`` is the
    first device's share of the parts that ran."""

    share: float
    parts: tuple[tuple[int, int], ...]
    run: RunResult
    verified: bool  # the comparison found no mismatch
    check: Check = Check.VERIFIED  # UNVERIFIED: nothing compared (every output ignored)

    @property
    def ran_share(self) -> float:
        (start, stop), extent = self.parts[0], self.parts[-1][1]
        return (stop - start) / extent

    def to_json(self) -> dict[str, Any]:
        return {
            "share": self.share,
            "ran_share": self.ran_share,
            "parts": [list(p) for p in self.parts],
            "measured_ms": self.run.wall_ms,
            "part_kernel_ms": list(self.run.kernel_ms),
            "verified": self.verified and self.check is Check.VERIFIED,
            "verification": self.check.value,
            "buffers": self.run.buffers.to_json(),
        }


def two_parts(
    extent: int, blocks: Sequence[int], share: float
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The first device takes ``share`` of ``extent``, the second the rest, each in whole
    blocks of its own as the planner gives them (Eqs. 5-9, ``perfport.split.plan.adjust``):
    the elements the floors leave go to the device that covers them with the least work, so
    each part is whole in its device's work-groups wherever the extent allows. (Snapping the
    first device's part alone gave the second 2720 elements in work-groups of 256.) At share 0
    and 1 exactly one device takes everything."""
    if share <= 0 or share >= 1:
        first = extent if share >= 1 else 0
    else:
        first = adjust(extent, blocks, (share, 1 - share), (1.0, 1.0))[1][0]
    return (0, first), (first, extent)


def sweep_parts(
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    extent: int,
    blocks: Sequence[int],
    points: int,
) -> list[tuple[float, list[Part]]]:
    """Each of ``points`` evenly spaced shares of the first device, 0 to 1, and its parts."""
    if len(devices) != 2:
        raise SpecError("a split-factor sweep takes exactly two devices; drop --sweep or a device")
    if points < 2:
        raise SpecError(f"--sweep {points}: give at least 2 points (0 and 1 are the ends)")
    out = []
    for k in range(points):
        share = k / (points - 1)
        bounds = two_parts(extent, blocks, share)
        parts = [Part(d, c, a, b) for d, c, (a, b) in zip(devices, configs, bounds, strict=True)]
        out.append((share, parts))
    return out


def check_sweep(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    split: SplitDim,
    blocks: Sequence[int],
    points: int,
) -> None:
    """Raise SpecError, before anything runs, where a sweep point's part could not launch or
    breaks the kernel's restrictions at its problem."""
    extent = int(problem[split.extent])
    for share, parts in sweep_parts(devices, configs, extent, blocks, points):
        why = refusal(spec, problem, split, parts)
        if why:
            raise SpecError(f"--sweep {points}: at share {share:g}, {why}")


def sweep(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    split: SplitDim,
    blocks: Sequence[int],
    points: int,
    expected: dict[str, Any],
    target_s: float = 0.2,
    opener: Opener = open_session,
    group: GroupOpener | None = None,
) -> tuple[SweepPoint, ...]:
    """Run the split at ``points`` evenly spaced shares of the first device, from 0 (all on
    the second) to 1 (all on the first), each verified against ``expected``; every point's
    parts are checked before the first runs (``check_sweep``)."""
    check_sweep(spec, problem, devices, configs, split, blocks, points)
    extent = int(problem[split.extent])
    comparison = Comparison.of(spec, problem)  # tune's: ignored outputs, atol/rtol, verify=
    out = []
    for share, parts in sweep_parts(devices, configs, extent, blocks, points):
        run = run_parts(spec, problem, parts, split, target_s=target_s, opener=opener, group=group)
        wrong = comparison.mismatch(run.outputs, expected)
        bounds = tuple((p.start, p.stop) for p in parts)
        out.append(SweepPoint(share, bounds, run, wrong is None, comparison.check(expected)))
    return tuple(out)
