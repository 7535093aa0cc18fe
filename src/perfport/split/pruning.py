"""Pruning across devices (erdem2018 section 2.1, Tables 1-2): each device's legal count and
the configurations legal on every device, the constraints "valid for all the OpenCL devices
in the target system"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, SpecError
from perfport.space import ConstraintSource, Space


@dataclass(frozen=True)
class DeviceSpace:
    """One device's space: its id and the configurations before and after its limits."""

    device: str
    cartesian: int
    legal: int
    pruned: int  # removed by the device's limits, not by the kernel's own restrictions

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "cartesian": self.cartesian,
            "legal": self.legal,
            "pruned": self.pruned,
        }


@dataclass(frozen=True)
class CommonSpace:
    """The spaces of one kernel and problem on several devices, and their intersection."""

    per_device: tuple[DeviceSpace, ...]
    cartesian: int
    common: int  # configurations legal on every device

    def to_json(self) -> dict[str, Any]:
        return {
            "per_device": [d.to_json() for d in self.per_device],
            "common": {"cartesian": self.cartesian, "legal": self.common},
        }


def _flat(space: Space) -> np.ndarray:
    """The legal configurations as flat positions in the cartesian grid (sorted)."""
    shape = tuple(len(p.values) for p in space.params)
    if not shape:
        return np.arange(len(space), dtype=np.int64)
    return np.ravel_multi_index(space.positions().T, shape).astype(np.int64)


def common_space(devices: Sequence[DeviceInfo], spaces: Sequence[Space]) -> CommonSpace:
    """Per-device counts and the configurations legal on all of ``spaces`` (one kernel and
    problem, one space per device, in the same order)."""
    if len(devices) != len(spaces) or not spaces:
        raise SpecError("give one space per device, at least one")
    names = {s.names for s in spaces}
    if len(names) != 1:
        raise SpecError("the spaces have different parameters; give one kernel for every device")
    per = tuple(
        DeviceSpace(
            d.id, s.report.cartesian, s.report.legal, s.report.removed(ConstraintSource.DEVICE)
        )
        for d, s in zip(devices, spaces, strict=True)
    )
    common = _flat(spaces[0])
    for s in spaces[1:]:
        common = np.intersect1d(common, _flat(s), assume_unique=True)
    return CommonSpace(per, spaces[0].report.cartesian, len(common))
