"""The contract every backend implements: build, move data, launch with device-event timing."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, Language


@dataclass(frozen=True)
class LocalSpace:
    """A launch argument that is a ``__local`` buffer of ``nbytes`` (CUDA: dynamic shared)."""

    nbytes: int


@dataclass(frozen=True)
class ConstantData:
    """A launch argument whose device ``buffer`` belongs in constant memory: OpenCL passes
    the buffer to a ``__constant`` parameter, CUDA copies it into the module's
    ``__constant__`` array ``name``."""

    name: str
    buffer: Any


class CompiledKernel(ABC):
    """A built kernel and the limits the driver reports for it after the build."""

    max_work_group_size: int  # CL_KERNEL_WORK_GROUP_SIZE / cudaFuncAttributes.maxThreadsPerBlock
    static_local_mem_bytes: int  # local memory the compiled code declares itself
    build_log: str = ""  # the compiler's warnings and notes, kept with the results

    def dynamic_local_bytes(self, sizes: Sequence[int]) -> int:
        """The local memory a launch with local buffers of ``sizes`` bytes takes, laid out
        as this kernel's back end lays them out (packed here)."""
        return sum(sizes)


class Session(ABC):
    """One context and queue on one device.

    Not thread-safe: one session per worker process. Call order: ``compile`` and ``upload``
    in any order, then any number of ``launch``/``download``; ``close`` last. ``compile``
    raises BuildError; ``launch`` raises LaunchError when the driver refuses the launch.
    After an error that poisons the context (e.g. a CUDA illegal address), ``healthy`` turns
    False and the caller must close the session and open a new one.
    """

    device: DeviceInfo
    healthy: bool = True

    @abstractmethod
    def compile(
        self,
        source: str,
        language: Language,
        entry: str,
        defines: Mapping[str, str],
        include_dirs: Sequence[str] = (),
    ) -> CompiledKernel:
        """Build ``entry`` with ``-D`` ``defines``; ``#include "x.h"`` also searches the
        (absolute) folders ``include_dirs``, not only the working directory."""

    @abstractmethod
    def upload(self, array: np.ndarray) -> Any:
        """Copy a host array to a new device buffer and return the buffer."""

    @abstractmethod
    def write(self, buffer: Any, array: np.ndarray) -> None:
        """Overwrite a device buffer with a host array of the same size."""

    @abstractmethod
    def download(self, buffer: Any, out: np.ndarray) -> None:
        """Copy a device buffer into ``out`` (same size)."""

    # Part of a buffer, in bytes: a split's halo exchange moves only its neighbours' rows.
    @abstractmethod
    def read_range(self, buffer: Any, offset: int, out: np.ndarray) -> None:
        """Copy ``out.nbytes`` bytes of ``buffer`` from byte ``offset`` into ``out``."""

    @abstractmethod
    def write_range(self, buffer: Any, offset: int, array: np.ndarray) -> None:
        """Copy ``array`` into ``buffer`` at byte ``offset``."""

    @abstractmethod
    def copy_range(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        """Copy ``nbytes`` between two buffers of this session, on the device."""

    @abstractmethod
    def launch(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
        repeats: int = 1,
    ) -> list[float]:
        """Launch ``repeats`` times back to back; return each launch's device time in ms.
        ``args`` holds device buffers, numpy scalars, LocalSpace and ConstantData."""

    # Enqueue now, wait later: a split enqueues every device's part, then waits for each,
    # with no thread per part. A session that cannot enqueue asynchronously runs the launch
    # in ``start_launch`` (the default), so the pair always works.
    def start_launch(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
    ) -> Any:
        """Enqueue one launch and return a handle for ``finish_launch`` without waiting."""
        return self.launch(kernel, global_size, local_size, args, 1)[0]

    def finish_launch(self, pending: Any) -> float:
        """Wait for a ``start_launch``; its device time in ms (LaunchError as ``launch``)."""
        return float(pending)

    # Device to device between two sessions: a split's halo rows skip the host where the
    # backends allow it (one OpenCL context over both devices, CUDA peer access).
    def can_copy_from(self, other: Session) -> bool:
        """Whether ``copy_from(other, ...)`` copies without the host."""
        return False

    def copy_from(
        self, other: Session, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int
    ) -> bool:
        """Copy ``nbytes`` of ``other``'s buffer ``src`` into this session's ``dst`` without
        the host and wait for it; False (nothing copied) where the two cannot, and the caller
        stages the bytes through the host. The source's writes must have finished."""
        return False

    # Sub-buffers: parts of one split on devices of one context read and write regions of
    # one parent buffer instead of copies of their own (``perfport.split.subbuffers``).
    def shares_buffers_with(self, other: Session) -> bool:
        """Whether ``other``'s buffers (and sub-buffers of them) may be this session's launch
        arguments: one OpenCL context over both devices."""
        return False

    def sub_buffer_align(self) -> int | None:
        """The byte multiple a sub-buffer's origin must be on this device (OpenCL's
        ``CL_DEVICE_MEM_BASE_ADDR_ALIGN`` / 8); None where this session makes none."""
        return None

    def sub_buffer(self, parent: Any, offset: int, nbytes: int) -> Any:
        """A buffer over bytes [offset, offset + nbytes) of ``parent``, sharing its memory
        (``offset`` a multiple of ``sub_buffer_align()``)."""
        raise NotImplementedError(f"{type(self).__name__} makes no sub-buffers")

    def forget_copies(self) -> None:  # noqa: B027 (optional hook)
        """Release what ``copy_from`` keeps for transfers that recur (a halo's, every step):
        the transfers that follow will not repeat those (the parts changed)."""

    def close(self) -> None:  # noqa: B027 (optional hook)
        """Release the context."""


def opencl_platform(device_id: str) -> str:
    """The platform of an OpenCL device id (``opencl:<platform>:<device>[.<sub>]``): the
    devices that one context can hold share it."""
    return device_id.split(":")[1]
