"""How a split opens its parts' sessions: a CPU that shares a split with GPUs runs its part
on a sub-device (OpenCL device fission by counts) that leaves ``reserve`` cores to the GPU
drivers' host threads (PoCL otherwise starts a thread per core, and they compete with the
NVIDIA driver's polling thread); the OpenCL devices of one platform share a context, so
time-stepping exchanges halo rows between them on the devices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Backend, DeviceInfo, DeviceType, SpecError
from perfport.devices import Session, open_session, open_sessions


def _whole_cpu(d: DeviceInfo) -> bool:
    """An OpenCL CPU device that is not itself a sub-device ("opencl:0:0.1")."""
    return d.backend is Backend.OPENCL and d.type is DeviceType.CPU and "." not in d.id


@dataclass(frozen=True)
class Opening:
    """The compute units each partitioned CPU runs on (by device id; the others whole),
    the cores left free, and whether one platform's devices share a context: with it,
    time-stepping halos go device to device (CUDA peers too), without it via the host."""

    compute_units: tuple[tuple[str, int], ...] = ()
    reserve: int = 0
    share_context: bool = True

    def units(self, device_id: str) -> int | None:
        return dict(self.compute_units).get(device_id)

    def one(self, device: DeviceInfo) -> Session:
        """A session on ``device`` alone (an ``Opener``)."""
        return open_session(device, self.units(device.id))

    def group(self, devices: Sequence[DeviceInfo]) -> list[Session]:
        """A session per device, sharing contexts where ``share_context`` allows."""
        return open_sessions(devices, dict(self.compute_units), self.share_context)

    def to_json(self, devices: Sequence[DeviceInfo]) -> dict[str, Any]:
        return {
            "cpu_reserve": self.reserve,
            "cpu_parts": [
                {"device": d.id, "compute_units": self.units(d.id), "of": d.compute_units}
                for d in devices
                if self.units(d.id) is not None
            ],
        }


def cpu_opening(
    devices: Sequence[DeviceInfo], reserve: int | None = None, share_context: bool = True
) -> Opening:
    """The opening of a split over ``devices``: each whole OpenCL CPU keeps all but
    ``reserve`` compute units (None: one per GPU in the split, so none without a GPU);
    raises SpecError where that leaves a CPU no compute unit."""
    gpus = sum(d.type is DeviceType.GPU for d in devices)
    keep = gpus if reserve is None else reserve
    if keep < 0:
        raise SpecError(f"--cpu-reserve {keep}: give 0 or more cores to leave free")
    if reserve and not any(_whole_cpu(d) for d in devices):
        # Sub-devices are already partitions: there is no whole CPU to keep cores of.
        raise SpecError(f"--cpu-reserve {reserve} partitions a whole OpenCL CPU, and this split "
                        "has none (sub-devices are partitions already); drop --cpu-reserve or "
                        "give the whole CPU (opencl:P:D)")  # fmt: skip
    units = []
    for d in devices:
        if keep and _whole_cpu(d):
            if keep >= d.compute_units:
                raise SpecError(
                    f"--cpu-reserve {keep} leaves none of {d.id}'s {d.compute_units} compute "
                    f"units to its part; give at most {d.compute_units - 1}"
                )
            units.append((d.id, d.compute_units - keep))
    return Opening(tuple(units), keep if units else 0, share_context)
