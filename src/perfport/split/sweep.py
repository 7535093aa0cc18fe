"""Split-factor sweeps (erdem2018 Figures 5-7): the same two-device split run at a range of
shares, so the computed split can be set against the best one found by trying them all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Config, DeviceInfo, KernelSpec, Problem, SpecError, SplitDim
from perfport.devices import open_session
from perfport.measure.verify import mismatch
from perfport.split.execute import GroupOpener, Opener, Part, RunResult, run_parts


@dataclass(frozen=True)
class SweepPoint:
    """One share tried: the first device's ``share`` of the extent (snapped to its whole
    work-groups), the parts that gave, and what the run measured."""

    share: float
    parts: tuple[tuple[int, int], ...]
    run: RunResult
    verified: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "share": self.share,
            "parts": [list(p) for p in self.parts],
            "measured_ms": self.run.wall_ms,
            "part_kernel_ms": list(self.run.kernel_ms),
            "verified": self.verified,
            "buffers": self.run.buffers.to_json(),
        }


def two_parts(extent: int, block: int, share: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """The first device takes ``share`` of ``extent`` in whole blocks of its own (nearest), the
    second the rest."""
    first = min(extent, max(0, round(extent * share / block) * block))
    return (0, first), (first, extent)


def sweep(
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    split: SplitDim,
    first_block: int,
    points: int,
    expected: dict[str, Any],
    target_s: float = 0.2,
    opener: Opener = open_session,
    group: GroupOpener | None = None,
) -> tuple[SweepPoint, ...]:
    """Run the split at ``points`` evenly spaced shares of the first device, from 0 (all on
    the second) to 1 (all on the first), each verified against ``expected``."""
    if len(devices) != 2:
        raise SpecError("a split-factor sweep takes exactly two devices; drop --sweep or a device")
    if points < 2:
        raise SpecError(f"--sweep {points}: give at least 2 points (0 and 1 are the ends)")
    extent = int(problem[split.extent])
    out = []
    for k in range(points):
        share = k / (points - 1)
        bounds = two_parts(extent, first_block, share)
        parts = [Part(d, c, a, b) for d, c, (a, b) in zip(devices, configs, bounds, strict=True)]
        run = run_parts(spec, problem, parts, split, target_s=target_s, opener=opener, group=group)
        wrong = mismatch(run.outputs, expected, spec.tolerance)
        out.append(SweepPoint(share, bounds, run, wrong is None))
    return tuple(out)
