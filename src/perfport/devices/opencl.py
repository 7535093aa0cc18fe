"""OpenCL devices through pyopencl: every platform, every device."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perfport._core import Backend, BuildError, DeviceError, DeviceInfo, DeviceType, Language
from perfport._core.errors import LaunchError, SpecError
from perfport._core.optional import require
from perfport.devices.capture import build_messages, captured_output
from perfport.devices.dialect import OPENCL_PRELUDE
from perfport.devices.failures import LaunchPhase, is_refusal
from perfport.devices.session import (
    CompiledKernel,
    ConstantData,
    LocalSpace,
    Session,
    opencl_platform,
)


def _cl() -> Any:
    return require("pyopencl", "pocl", "OpenCL devices")


def _device_type(cl: Any, t: int) -> DeviceType:
    if t & cl.device_type.GPU:
        return DeviceType.GPU
    if t & cl.device_type.CPU:
        return DeviceType.CPU
    if t & cl.device_type.ACCELERATOR:
        return DeviceType.ACCELERATOR
    return DeviceType.OTHER


def _subgroup_size(d: Any) -> int | None:
    # Vendor queries; OpenCL 1.2 devices (PoCL's CPU build) have no portable one.
    for attr in ("warp_size_nv", "wavefront_width_amd"):
        try:
            return int(getattr(d, attr))
        except Exception:
            continue
    try:
        sizes = d.sub_group_sizes_intel
        return int(max(sizes)) if sizes else None
    except Exception:
        return None


def list_opencl() -> list[DeviceInfo]:
    """Every OpenCL device of every platform; none (not an error) if no ICD is installed."""
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    out = []
    for i, p in enumerate(platforms):
        try:
            devices = p.get_devices()
        except cl.Error:
            continue
        for j, d in enumerate(devices):
            out.append(_info(cl, p, d, f"opencl:{i}:{j}"))
    return out


def _info(cl: Any, p: Any, d: Any, device_id: str, name_suffix: str = "") -> DeviceInfo:
    return DeviceInfo(
        id=device_id,
        backend=Backend.OPENCL,
        name=d.name.strip() + name_suffix,
        vendor=d.vendor.strip(),
        type=_device_type(cl, d.type),
        driver=d.driver_version.strip(),
        platform=f"{p.name.strip()} {p.version.strip()}",
        version=d.version.strip(),
        compute_units=int(d.max_compute_units),
        max_work_group_size=int(d.max_work_group_size),
        max_work_item_sizes=tuple(int(x) for x in d.max_work_item_sizes),
        local_mem_bytes=int(d.local_mem_size),
        global_mem_bytes=int(d.global_mem_size),
        subgroup_size=_subgroup_size(d),
        vector_width=_optional(d, "native_vector_width_float"),
        cache_bytes=_optional(d, "global_mem_cache_size"),
        cache_line_bytes=_optional(d, "global_mem_cacheline_size"),
    )


def _optional(d: Any, name: str) -> int | None:
    """A device property some drivers do not report (or report as 0): None then."""
    try:
        value = int(getattr(d, name))
    except Exception:
        return None
    return value or None


# A sub-device id: the parent's id, a dot and the part's number ("opencl:0:0.1").
SUB_DEVICE = re.compile(r"opencl:(\d+):(\d+)\.(\d+)")


def _cl_device(cl: Any, device_id: str) -> tuple[Any, Any]:
    """The platform and pyopencl device of an id: a device, or a sub-device made by fission
    into parts of one compute unit each (``create_sub_devices([EQUALLY, 1])``), so one CPU
    serves as several devices (split runs, and their tests on a small machine)."""
    sub = SUB_DEVICE.fullmatch(device_id)
    p, d = (sub.group(1), sub.group(2)) if sub else device_id.split(":")[1:]
    platform = cl.get_platforms()[int(p)]
    device = platform.get_devices()[int(d)]
    if sub is None:
        return platform, device
    try:
        parts = device.create_sub_devices([cl.device_partition_property.EQUALLY, 1])
    except cl.Error as exc:
        raise DeviceError(
            f"device opencl:{p}:{d} cannot be partitioned into sub-devices ({_code_name(cl, exc)}); "
            "give whole devices"
        ) from None
    k = int(sub.group(3))
    if k >= len(parts):
        raise DeviceError(
            f"no sub-device {device_id}: opencl:{p}:{d} has {len(parts)} "
            f"(opencl:{p}:{d}.0 to .{len(parts) - 1})"
        )
    return platform, parts[k]


def opencl_clock(device_id: str) -> tuple[int | None, int | None]:
    """The driver's max clock (MHz) and native float vector width of an OpenCL device, for
    nominal figures beside measured ceilings; (None, None) where it does not say."""
    try:
        d = _cl_device(_cl(), device_id)[1]
        return int(d.max_clock_frequency) or None, int(d.native_vector_width_float) or None
    except Exception:
        return None, None


def opencl_sub_device(device_id: str) -> DeviceInfo:
    """The DeviceInfo of a sub-device id such as ``opencl:0:0.1`` (see ``_cl_device``)."""
    cl = _cl()
    try:
        platform, device = _cl_device(cl, device_id)
    except (IndexError, ValueError, cl.Error) as exc:
        raise DeviceError(f"no OpenCL device {device_id} ({exc}); see 'perfport devices'") from None
    # One name for every part, so that equal parts share a fingerprint and stored results.
    return _info(cl, platform, device, device_id, " (sub-device)")


class _OpenCLKernel(CompiledKernel):
    def __init__(self, program: Any, kernel: Any, device: Any, cl: Any) -> None:
        info = cl.kernel_work_group_info
        self.program = program  # its binaries carry PoCL's LLVM bitcode (features/ir.py)
        self.kernel = kernel
        self.max_work_group_size = int(kernel.get_work_group_info(info.WORK_GROUP_SIZE, device))
        self.static_local_mem_bytes = int(kernel.get_work_group_info(info.LOCAL_MEM_SIZE, device))


def _log(cl: Any, program: Any, device: Any) -> str:
    try:
        return str(program.get_build_info(device, cl.program_build_info.LOG) or "")
    except cl.Error:
        return ""


def _code_name(cl: Any, exc: Any) -> str:
    code = getattr(exc, "code", None)
    try:
        return str(cl.status_code.to_string(code)) if code is not None else type(exc).__name__
    except Exception:
        return f"CL_ERROR_{code}"


def reserved_device(cl: Any, device: Any, device_id: str, compute_units: int) -> Any:
    """A sub-device of ``compute_units`` of ``device``'s compute units (fission by counts):
    the rest stay free, e.g. for a GPU driver's host thread beside a CPU's part of a split
    (PoCL otherwise runs one thread per core)."""
    total = int(device.max_compute_units)
    if compute_units == total:
        return device
    if not 0 < compute_units < total:
        raise DeviceError(
            f"{device_id} has {total} compute units; a part of it takes 1 to {total}, "
            f"not {compute_units}"
        )
    counts = cl.device_partition_property
    try:
        (part,) = device.create_sub_devices(
            [counts.BY_COUNTS, compute_units, counts.BY_COUNTS_LIST_END]
        )
    except cl.Error as exc:
        raise DeviceError(
            f"{device_id} cannot be partitioned by counts ({_code_name(cl, exc)}); "
            "give --cpu-reserve 0"
        ) from None
    return part


def _resolve(cl: Any, device: DeviceInfo, compute_units: int | None) -> Any:
    try:
        found = _cl_device(cl, device.id)[1]
    except (IndexError, ValueError, cl.Error) as exc:
        raise DeviceError(f"no OpenCL device {device.id} ({exc}); see 'perfport devices'") from None
    return found if compute_units is None else reserved_device(cl, found, device.id, compute_units)


_UNSEARCHED = (
    " (include folder {!r} has a space, which OpenCL build options cannot hold: move the "
    "spec and its headers to a folder without one)"
)


class OpenCLSession(Session):
    """A queue on one OpenCL device, in its own context or (``bound``: a context and the
    device in it) in one shared with other sessions, whose buffers it can then copy from.
    ``compute_units``: run on a sub-device of that many of the device's compute units."""

    def __init__(
        self,
        device: DeviceInfo,
        compute_units: int | None = None,
        bound: tuple[Any, Any] | None = None,
    ) -> None:
        cl = self._cl = _cl()
        self.device = device
        if bound is None:
            self._device = _resolve(cl, device, compute_units)
            self._ctx = cl.Context([self._device])
        else:
            self._ctx, self._device = bound
        self.compute_units = int(self._device.max_compute_units)
        self._queue = cl.CommandQueue(
            self._ctx, self._device, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        self._boxes: dict[tuple[int, int], Any] = {}  # halo boxes by (source id, bytes)

    def compile(
        self,
        source: str,
        language: Language,
        entry: str,
        defines: Mapping[str, str],
        include_dirs: Sequence[str] = (),
    ) -> CompiledKernel:
        cl = self._cl
        if language is Language.CUDA:
            raise BuildError("a CUDA kernel cannot run on an OpenCL device")
        text = OPENCL_PRELUDE + source if language is Language.PORTABLE else source
        # The build options are one string split at spaces: a value with a space
        # (ETYPE=unsigned int) goes in as a #define line, as CUDA takes it as an option.
        spaced = {k: v for k, v in defines.items() if " " in v or "\t" in v}
        if spaced:
            lines = "".join(f"#define {k} {v}\n" for k, v in spaced.items())
            text = f"{lines}#line 1\n{text}"
        options = [f"-D{k}={v}" for k, v in defines.items() if k not in spaced]
        # A folder with a space cannot be an option either (PoCL refuses every quoting):
        # left out, it fails only a build that includes from it, which then says why.
        unusable = [d for d in include_dirs if re.search(r"\s", d)]
        options += [f"-I{d}" for d in include_dirs if d not in unusable]
        try:
            with captured_output() as captured:  # kept with the result, off the terminal
                # only for this device: a shared context may hold other devices
                program = cl.Program(self._ctx, text).build(options=options, devices=[self._device])
                kernel = cl.Kernel(program, entry)
        except cl.Error as exc:
            message = str(exc)
            first = next((ln for ln in message.splitlines() if "error" in ln.lower()), message)
            note = _UNSEARCHED.format(unusable[0]) if unusable and "not found" in message else ""
            raise BuildError(first.strip()[:300] + note, message) from None
        built = _OpenCLKernel(program, kernel, self._device, cl)
        built.build_log = build_messages(_log(cl, program, self._device), captured)
        return built

    def upload(self, array: np.ndarray) -> Any:
        cl = self._cl
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        return cl.Buffer(self._ctx, flags, hostbuf=np.ascontiguousarray(array))

    def write(self, buffer: Any, array: np.ndarray) -> None:
        self._cl.enqueue_copy(self._queue, buffer, np.ascontiguousarray(array)).wait()

    def download(self, buffer: Any, out: np.ndarray) -> None:
        self._cl.enqueue_copy(self._queue, out, buffer).wait()

    def read_range(self, buffer: Any, offset: int, out: np.ndarray) -> None:
        self._cl.enqueue_copy(self._queue, out, buffer, src_offset=offset).wait()

    def write_range(self, buffer: Any, offset: int, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array)
        self._cl.enqueue_copy(self._queue, buffer, data, dst_offset=offset).wait()

    def copy_range(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        self._cl.enqueue_copy(
            self._queue, dst, src, byte_count=nbytes, src_offset=src_offset, dst_offset=dst_offset
        ).wait()

    def can_copy_from(self, other: Session) -> bool:
        return isinstance(other, OpenCLSession) and other._ctx is self._ctx

    def copy_from(
        self, other: Session, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int
    ) -> bool:
        # In a context over several devices a buffer lives on one device at a time, and a
        # queue that touches a buffer last used on another device makes the driver move the
        # whole buffer (NVIDIA: a part's hundreds of MB, back and forth every step). So
        # each queue touches only its own device's buffers, and only a box of ``nbytes``
        # crosses: filled on the source's queue, emptied into ``dst`` on this one's.
        if not isinstance(other, OpenCLSession) or not self.can_copy_from(other):
            return False
        if other._device == self._device:
            self.copy_range(src, src_offset, dst, dst_offset, nbytes)
            return True
        box = self.halo_box(other, nbytes)
        other.copy_range(src, src_offset, box, 0, nbytes)
        self.copy_range(box, 0, dst, dst_offset, nbytes)
        return True

    def shares_buffers_with(self, other: Session) -> bool:
        return isinstance(other, OpenCLSession) and other._ctx is self._ctx

    def sub_buffer_align(self) -> int | None:
        return max(1, int(self._device.mem_base_addr_align) // 8)  # the driver says bits

    def sub_buffer(self, parent: Any, offset: int, nbytes: int) -> Any:
        return parent.get_sub_region(offset, nbytes)  # clCreateSubBuffer, the parent's flags

    def halo_box(self, other: OpenCLSession, nbytes: int) -> Any:
        """The buffer of ``nbytes`` that carries bytes from ``other``'s device to this one's,
        made once per (source, size): a halo's transfers recur every step. Only this
        session's copies use it, one at a time (a halo exchange's writes run in order)."""
        key = (id(other), nbytes)
        if key not in self._boxes:
            self._boxes[key] = self._cl.Buffer(self._ctx, self._cl.mem_flags.READ_WRITE, nbytes)
        return self._boxes[key]

    def launch(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
        repeats: int = 1,
    ) -> list[float]:
        cl = self._cl
        assert isinstance(kernel, _OpenCLKernel)
        k = kernel.kernel
        events: list[Any] = []
        try:
            _set_args(cl, k, args)
            for _ in range(repeats):
                events.append(
                    cl.enqueue_nd_range_kernel(
                        self._queue, k, tuple(global_size), tuple(local_size)
                    )
                )
            self._queue.finish()
            return [(e.profile.end - e.profile.start) * 1e-6 for e in events]
        except cl.Error as exc:
            # Only the first enqueue can be refused: a later one may report an earlier fault.
            phase = LaunchPhase.ENQUEUE if not events else LaunchPhase.EXECUTION
            raise self._failed(exc, phase) from None

    def start_launch(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
    ) -> Any:
        cl = self._cl
        assert isinstance(kernel, _OpenCLKernel)
        try:
            _set_args(cl, kernel.kernel, args)
            event = cl.enqueue_nd_range_kernel(
                self._queue, kernel.kernel, tuple(global_size), tuple(local_size)
            )
            self._queue.flush()  # submitted now: the devices run side by side
            return event
        except cl.Error as exc:
            raise self._failed(exc, LaunchPhase.ENQUEUE) from None

    def finish_launch(self, pending: Any) -> float:
        try:
            pending.wait()
            return float((pending.profile.end - pending.profile.start) * 1e-6)
        except self._cl.Error as exc:
            raise self._failed(exc, LaunchPhase.EXECUTION) from None

    def _failed(self, exc: Exception, phase: LaunchPhase) -> LaunchError:
        code = _code_name(self._cl, exc)
        refused = is_refusal(code, phase)
        if not refused:  # a fault may leave the context unusable: start afresh
            self.healthy = False
        return LaunchError(code, str(exc).splitlines()[0][:300], refused)

    def forget_copies(self) -> None:
        self._boxes.clear()  # pyopencl releases a buffer with its last reference

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._queue.finish()
        self._boxes.clear()


def _set_args(cl: Any, kernel: Any, args: Sequence[Any]) -> None:
    """Set the kernel's arguments; another number of them than it takes is the spec's mistake
    (pyopencl says only ``set_args() missing 1 required positional argument``)."""
    try:
        kernel.set_args(*(_cl_arg(cl, a) for a in args))
    except TypeError:
        takes = kernel.get_info(cl.kernel_info.NUM_ARGS)
        if takes == len(args):
            raise
        raise SpecError(
            f"kernel {kernel.function_name} takes {takes} argument(s) but the spec passes "
            f"{len(args)}; declare each argument of the kernel, in order, in args"
        ) from None


def _cl_arg(cl: Any, arg: Any) -> Any:
    if isinstance(arg, LocalSpace):
        return cl.LocalMemory(arg.nbytes)
    if isinstance(arg, ConstantData):  # a buffer serves a __constant parameter as it is
        return arg.buffer
    return arg


def open_opencl_sessions(
    devices: Sequence[DeviceInfo], compute_units: Mapping[str, int] | None = None
) -> list[OpenCLSession]:
    """A session per device, the devices of one platform sharing one context (so their
    sessions copy buffers between them on the devices); ``compute_units`` by device id as
    ``OpenCLSession``'s."""
    cl = _cl()
    units = compute_units or {}
    found = [_resolve(cl, d, units.get(d.id)) for d in devices]
    platforms: dict[str, list[int]] = {}
    for i, d in enumerate(devices):
        platforms.setdefault(opencl_platform(d.id), []).append(i)
    contexts = {}
    for members in platforms.values():
        try:
            context = cl.Context([found[i] for i in members])
        except cl.Error:  # a driver that refuses these devices together: a context each
            contexts.update({i: cl.Context([found[i]]) for i in members})
            continue
        contexts.update({i: context for i in members})
    return [
        OpenCLSession(d, bound=(contexts[i], found[i])) for i, d in enumerate(devices)
    ]  # fmt: skip
