"""Work-groups resident per compute unit, from the limits of a device's architecture.

How many work-groups a compute unit (an NVIDIA SM) holds at once is set by limits that
OpenCL does not report: work-items and work-groups per compute unit, and local memory per
compute unit (OpenCL's ``CL_DEVICE_LOCAL_MEM_SIZE`` is the most one work-group may use). They
are facts of an architecture, not of a device model, so they are listed here by
architecture, each with the device names it covers. A device not listed (PoCL, any other
GPU) has no known limits, and the feature that needs them (``f_barrier_exposed``,
``features.py``) is 0 there: its term drops out of a model, and calibration reports its cost
as uninformed rather than inventing one.

Registers per compute unit also limit residency; a kernel's register count is not known
before it is compiled, so it is not modelled (the kernels calibrated so far use few).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perfport.model.counts import EvaluatedStats, SyncKind
from perfport.model.errors import ModelError


@dataclass(frozen=True)
class ResidencyLimits:
    """The per-compute-unit limits of one architecture. ``warp``: work-items are allocated
    in whole sub-groups of this many; ``reserved_bytes``: local memory the driver takes per
    work-group on top of the kernel's."""

    architecture: str
    threads: int
    groups: int
    local_bytes: int
    reserved_bytes: int = 0
    warp: int = 32

    def resident(self, work_group_size: int, local_mem_bytes: int) -> int:
        """Work-groups of ``work_group_size`` work-items and ``local_mem_bytes`` of local
        memory that one compute unit holds at once (0: such a group does not fit)."""
        size = max(1, work_group_size)
        slots = -(-size // self.warp) * self.warp  # whole sub-groups
        by_threads = self.threads // slots
        by_local = (
            self.local_bytes // (local_mem_bytes + self.reserved_bytes)
            if local_mem_bytes > 0
            else self.groups
        )
        return min(self.groups, by_threads, by_local)


# NVIDIA compute capability 9.0 (Hopper: H100, H200, H800, H20, GH200), CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability": 2048 resident threads, 32 resident
# blocks and 228 KB of shared memory per SM, 1 KB of it reserved per block by the system.
HOPPER = ResidencyLimits("NVIDIA compute capability 9.0", 2048, 32, 228 * 1024, 1024)

ARCHITECTURES: tuple[tuple[re.Pattern[str], ResidencyLimits], ...] = (
    (re.compile(r"NVIDIA.*\bG?H(100|200|800|20)\b", re.I), HOPPER),
)


def limits_for(device: str) -> ResidencyLimits | None:
    """The residency limits of the device named ``device`` (as its driver names it), or
    None where its architecture is not listed."""
    return next((limits for name, limits in ARCHITECTURES if name.search(device)), None)


def barrier_exposed(stats: EvaluatedStats, limits: ResidencyLimits | None) -> float:
    """Work-items times local barriers per work-item, over the work-groups resident per
    compute unit (``f_barrier_exposed``): a work-group's work-items wait at a barrier for its
    slowest, and the fewer other groups a compute unit holds, the less of that wait they
    fill; per work-item it is 1 / resident groups per barrier. 0 where ``limits`` is None
    (the device's architecture is not listed) or the kernel has no local barrier."""
    if limits is None:
        return 0.0
    barriers = sum(v for k, v in stats.sync if k is SyncKind.BARRIER_LOCAL)
    if not barriers:
        return 0.0
    if stats.local_mem_bytes is None:
        raise ModelError(
            "f_barrier_exposed needs the kernel's local memory per work-group, which these "
            "statistics predate; gather them again (perfport model stats, or clear the cache)"
        )
    resident = limits.resident(int(stats.work_group_size), int(stats.local_mem_bytes))
    if resident < 1:
        raise ModelError(
            f"{stats.stats.kernel}: a work-group of {stats.work_group_size:g} work-items and "
            f"{stats.local_mem_bytes:g} bytes of local memory does not fit a compute unit of "
            f"{limits.architecture}"
        )
    return stats.thread_groups * stats.work_group_size * barriers / resident
