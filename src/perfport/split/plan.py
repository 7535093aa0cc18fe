"""Split plans (erdem2018 section 2.2): split factors from each device's speed (Eq. 4), the
adjustment that keeps each device's tuned work-group size whole (Eqs. 5-9) and the
theoretical heterogeneous time (Algorithm 1).

The plan counts *elements* of the split dimension (the kernel's extent, e.g. ``n`` or
``height``) rather than work-items: a device's block is its work-group size times the elements
one work-item covers there (matmul's ``row_tile``), so devices whose configurations differ in
more than the work-group size still split one range. With granule 1 it is the paper's G.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import SpecError

_EPS = 1e-9  # floor(G * S / wg) of a value that is an integer up to rounding


@dataclass(frozen=True)
class SplitPlan:
    """How one NDRange dimension of ``extent`` elements is shared by ``devices``.

    ``split_factors`` are Eq. 4's (speed shares); ``groups`` the whole work-groups of ``blocks``
    elements each device runs after Eqs. 5-9; ``parts`` the element range [start, stop) of each
    device, contiguous and in device order; ``adjusted_factors`` each part's share of the
    extent (they sum to 1). ``residue_device`` took the leftover of Eq. 8b (None when the floors
    left none); when that leftover is not a multiple of its block, its last work-group is partly
    idle (the kernel's bounds check), where the paper lets parts overlap instead.
    ``theoretical_ms`` is Algorithm 1 on the split factors (the balanced ideal),
    ``adjusted_theoretical_ms`` Algorithm 1 on the adjusted ones.
    """

    devices: tuple[str, ...]
    dimension: int
    extent: int
    blocks: tuple[int, ...]
    times_ms: tuple[float, ...]
    split_factors: tuple[float, ...]
    groups: tuple[int, ...]
    parts: tuple[tuple[int, int], ...]
    adjusted_factors: tuple[float, ...]
    residue_device: int | None
    theoretical_ms: float
    adjusted_theoretical_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "devices": list(self.devices),
            "dimension": self.dimension,
            "extent": self.extent,
            "blocks": list(self.blocks),
            "times_ms": list(self.times_ms),
            "split_factors": list(self.split_factors),
            "groups": list(self.groups),
            "parts": [list(p) for p in self.parts],
            "adjusted_factors": list(self.adjusted_factors),
            "residue_device": self.residue_device,
            "theoretical_ms": self.theoretical_ms,
            "adjusted_theoretical_ms": self.adjusted_theoretical_ms,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SplitPlan:
        return cls(
            devices=tuple(str(x) for x in d["devices"]),
            dimension=int(d["dimension"]),
            extent=int(d["extent"]),
            blocks=tuple(int(x) for x in d["blocks"]),
            times_ms=tuple(float(x) for x in d["times_ms"]),
            split_factors=tuple(float(x) for x in d["split_factors"]),
            groups=tuple(int(x) for x in d["groups"]),
            parts=tuple((int(a), int(b)) for a, b in d["parts"]),
            adjusted_factors=tuple(float(x) for x in d["adjusted_factors"]),
            residue_device=None if d["residue_device"] is None else int(d["residue_device"]),
            theoretical_ms=float(d["theoretical_ms"]),
            adjusted_theoretical_ms=float(d["adjusted_theoretical_ms"]),
        )


def split_factors(times_ms: Sequence[float]) -> tuple[float, ...]:
    """Eq. 4: each device's speed (1 / time) over the sum of the speeds. The speeds are taken
    relative to the fastest device's (its time over each time, at most 1), so a time as
    small as 5e-324 ms does not make 1 / time infinite."""
    fastest = min(times_ms)
    speeds = [fastest / t for t in times_ms]
    total = sum(speeds)
    return tuple(s / total for s in speeds)


def theoretical_ms(factors: Sequence[float], times_ms: Sequence[float]) -> float:
    """Algorithm 1: the slowest device's share of its own whole-problem time."""
    return max(f * t for f, t in zip(factors, times_ms, strict=True))


def adjust(
    extent: int, blocks: Sequence[int], factors: Sequence[float], times_ms: Sequence[float]
) -> tuple[tuple[int, ...], tuple[int, ...], int | None]:
    """Eqs. 5-9: whole work-groups and elements per device, and the device that took the
    residue.

    Each device first gets floor(G * S_i / wg_i) groups (Eqs. 6-7); the elements left over
    (Eq. 8b) go to the device that covers them with the least work, ceil(R / wg_i) * wg_i
    (Eq. 9), ties to the one that then finishes first, then to the first. A device whose
    factor is 0 (dropped by rebalancing) takes none."""
    groups = [math.floor(extent * s / b + _EPS) for s, b in zip(factors, blocks, strict=True)]
    residue = extent - sum(g * b for g, b in zip(groups, blocks, strict=True))
    elements = [g * b for g, b in zip(groups, blocks, strict=True)]
    if residue <= 0:  # the floors cannot overshoot; only rounding noise lands here
        return tuple(groups), tuple(elements), None

    def cost(i: int) -> tuple[int, float, int]:
        extra = math.ceil(residue / blocks[i])
        finish = times_ms[i] * (groups[i] * blocks[i] + residue) / extent
        return extra * blocks[i], finish, i

    chosen = min((i for i, f in enumerate(factors) if f > 0), key=cost)
    groups[chosen] += math.ceil(residue / blocks[chosen])
    elements[chosen] += residue
    return tuple(groups), tuple(elements), chosen


def plan_split(
    devices: Sequence[str],
    extent: int,
    blocks: Sequence[int],
    times_ms: Sequence[float],
    dimension: int = 0,
    factors: Sequence[float] | None = None,
) -> SplitPlan:
    """The plan for ``extent`` elements over ``devices``, each with the block (work-group
    size times elements per work-item along the dimension) of its best configuration and that
    configuration's whole-problem time. ``factors`` replaces Eq. 4's shares (rebalancing
    gives its own; non-negative, summing to 1)."""
    n = len(devices)
    if n < 2:
        raise SpecError("a split needs at least two devices; give --device twice or more")
    if len(blocks) != n or len(times_ms) != n:
        raise SpecError("give one block and one time per device")
    if extent < 1 or any(b < 1 for b in blocks):
        raise SpecError(f"extent {extent} and blocks {list(blocks)} must be at least 1")
    if any(not (math.isfinite(t) and t > 0) for t in times_ms):
        raise SpecError(f"device times {list(times_ms)} must be positive and finite")
    if factors is None:
        factors = split_factors(times_ms)
    elif len(factors) != n or min(factors) < 0 or abs(sum(factors) - 1) > 1e-6:
        raise SpecError(f"split factors {list(factors)} must be one per device, >= 0, sum 1")
    factors = tuple(factors)
    groups, elements, residue_device = adjust(extent, blocks, factors, times_ms)
    parts, start = [], 0
    for count in elements:
        parts.append((start, start + count))
        start += count
    adjusted = tuple((b - a) / extent for a, b in parts)
    return SplitPlan(
        devices=tuple(devices),
        dimension=dimension,
        extent=extent,
        blocks=tuple(blocks),
        times_ms=tuple(times_ms),
        split_factors=factors,
        groups=groups,
        parts=tuple(parts),
        adjusted_factors=adjusted,
        residue_device=residue_device,
        theoretical_ms=theoretical_ms(factors, times_ms),
        adjusted_theoretical_ms=theoretical_ms(adjusted, times_ms),
    )
