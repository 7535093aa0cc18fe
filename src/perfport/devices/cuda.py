"""CUDA devices through CuPy (optional extra ``cuda``)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perfport._core import Backend, BuildError, DeviceError, DeviceInfo, DeviceType, Language
from perfport._core.errors import LaunchError
from perfport._core.optional import require
from perfport.devices.dialect import CUDA_PRELUDE
from perfport.devices.failures import LaunchPhase, cuda_error_code, is_refusal, normalise_code
from perfport.devices.peer import CopyRoute, DeviceBytes, peer_copy, route
from perfport.devices.session import CompiledKernel, ConstantData, LocalSpace, Session

# Errors after which the CUDA context is unusable: the worker must start afresh.
_STICKY = (
    "ILLEGAL_ADDRESS",
    "LAUNCH_FAILED",
    "LAUNCH_FAILURE",  # the runtime API's spelling (cudaErrorLaunchFailure)
    "ILLEGAL_INSTRUCTION",
    "MISALIGNED_ADDRESS",
    "HARDWARE_STACK_ERROR",
    "ASSERT",
    "LAUNCH_TIMEOUT",
)
_DEFAULT_DYNAMIC_SHARED = 48 * 1024


_MAX_GRID = (2**31 - 1, 65535, 65535)  # blocks per grid dimension, every CUDA GPU since 3.0
_SHARED_ALIGN = 16  # each dynamic local buffer starts here: float4/double2 loads stay aligned


def grid_over_limits(grid: Sequence[int]) -> str:
    """Why a grid of ``grid`` blocks cannot launch, or ''. Past its limit CuPy truncates a
    grid's x to 32 bits (2^32 + 1024 blocks ran as 1024, on an H200), so it is refused here."""
    if all(g <= m for g, m in zip(grid, _MAX_GRID, strict=True)):
        return ""
    return (f"a grid of {tuple(grid)} blocks passes CUDA's limits {_MAX_GRID}: use larger "
            "blocks or a smaller problem")  # fmt: skip


def launch_arguments(args: Sequence[Any], portable: bool) -> tuple[int, tuple[Any, ...]]:
    """The dynamic shared memory a launch needs and the kernel's arguments. A portable
    kernel's LOCAL_PARAMs each get their own part of it (their byte offsets passed in their
    places); a CUDA kernel of the user's shares it as one block it lays out itself."""
    shared, plain = 0, []
    for a in args:
        if isinstance(a, LocalSpace):
            start = -(-shared // _SHARED_ALIGN) * _SHARED_ALIGN if portable else shared
            if portable:
                plain.append(np.uint32(start))
            shared = start + a.nbytes
        elif not isinstance(a, ConstantData):
            plain.append(a)
    return shared, tuple(plain)


def needs_shared_optin(static_bytes: int, dynamic_bytes: int) -> bool:
    """Whether a launch must raise the kernel's dynamic shared-memory limit first: CUDA
    allows 48 KiB per block, static and dynamic together, unless the kernel opts in."""
    return static_bytes + dynamic_bytes > _DEFAULT_DYNAMIC_SHARED


def _cupy() -> Any:
    return require("cupy", "cuda", "CUDA devices")


def list_cuda() -> list[DeviceInfo]:
    """Every CUDA device; none when CuPy or a driver is missing (listing is best-effort)."""
    try:
        cupy = importlib.import_module("cupy")
        runtime = cupy.cuda.runtime
        count = runtime.getDeviceCount()
        driver = runtime.driverGetVersion()
    except Exception:
        return []
    out = []
    for i in range(count):
        p = runtime.getDeviceProperties(i)
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        shared = int(p.get("sharedMemPerBlockOptin") or p["sharedMemPerBlock"])
        out.append(
            DeviceInfo(
                id=f"cuda:{i}",
                backend=Backend.CUDA,
                name=name.strip(),
                vendor="NVIDIA",
                type=DeviceType.GPU,
                driver=f"CUDA driver {driver // 1000}.{driver % 1000 // 10}",
                platform=f"CUDA runtime {runtime.runtimeGetVersion()}",
                version=f"sm_{p['major']}{p['minor']}",
                compute_units=int(p["multiProcessorCount"]),
                max_work_group_size=int(p["maxThreadsPerBlock"]),
                max_work_item_sizes=tuple(int(x) for x in p["maxThreadsDim"]),
                local_mem_bytes=shared,
                global_mem_bytes=int(p["totalGlobalMem"]),
                subgroup_size=int(p["warpSize"]),
            )
        )
    return out


class _CudaKernel(CompiledKernel):
    def __init__(self, module: Any, kernel: Any, portable: bool = False) -> None:
        self.module = module  # keeps the module alive
        self.kernel = kernel
        self.portable = portable  # its LOCAL_PARAMs take byte offsets (the dialect's prelude)
        self.constants: dict[str, tuple[int, int] | None] = {}  # __constant__ address, bytes
        self.max_work_group_size = int(kernel.max_threads_per_block)
        self.static_local_mem_bytes = int(kernel.shared_size_bytes)

    def dynamic_local_bytes(self, sizes: Sequence[int]) -> int:
        return launch_arguments([LocalSpace(n) for n in sizes], self.portable)[0]


def _module_global(module: int, name: str) -> tuple[int, int] | None:
    """Address and size of a module's global variable, or None. CuPy's get_global does not
    tell the size, so ask the driver."""
    import ctypes

    driver = ctypes.CDLL("libcuda.so.1")
    address, size = ctypes.c_uint64(), ctypes.c_size_t()
    status = driver.cuModuleGetGlobal_v2(
        ctypes.byref(address), ctypes.byref(size), ctypes.c_void_p(module), name.encode()
    )
    return (address.value, size.value) if status == 0 else None


def _error_code(exc: Exception) -> str:
    return cuda_error_code(str(exc), type(exc).__name__)


class CudaSession(Session):
    def __init__(self, device: DeviceInfo) -> None:
        cupy = self._cupy = _cupy()
        try:
            index = int(device.id.split(":")[1])
            self._device = cupy.cuda.Device(index)
            self._device.use()
        except Exception as exc:
            raise DeviceError(
                f"no CUDA device {device.id} ({exc}); see 'perfport devices'"
            ) from None
        self.device = device
        self.index = index
        self._peers: dict[int, bool] = {}  # peer access to each other device, once asked
        with self._device:  # a stream belongs to the device current when it is made
            self._stream = cupy.cuda.Stream(non_blocking=True)

    def compile(
        self,
        source: str,
        language: Language,
        entry: str,
        defines: Mapping[str, str],
        include_dirs: Sequence[str] = (),
    ) -> CompiledKernel:
        cupy = self._cupy
        if language is Language.OPENCL:
            raise BuildError("an OpenCL kernel cannot run on a CUDA device")
        text = CUDA_PRELUDE + source if language is Language.PORTABLE else source
        options = (*(f"-D{k}={v}" for k, v in defines.items()), *(f"-I{d}" for d in include_dirs))
        try:
            with self._device:  # the module loads on the current device
                module = cupy.RawModule(code=text, options=options)
                kernel = module.get_function(entry)
            compiled = _CudaKernel(module, kernel, language is Language.PORTABLE)
        except Exception as exc:  # CompileException, or a missing entry point
            message = str(exc)
            first = next((ln for ln in message.splitlines() if "error" in ln.lower()), message)
            if "NOT_FOUND" in first and language is Language.CUDA:
                first += (f"; is {entry} declared extern \"C\"? C++ mangles other names (for "
                          "a template, tune an extern \"C\" wrapper that calls it)")  # fmt: skip
            raise BuildError(first.strip()[:400], message) from None
        return compiled

    # Every call enters the session's device: CuPy's current device is per thread, and a
    # split run drives several sessions (several GPUs) from one thread and launches each
    # from a pool thread.
    def upload(self, array: np.ndarray) -> Any:
        with self._device, self._stream:
            return self._cupy.asarray(np.ascontiguousarray(array))

    def write(self, buffer: Any, array: np.ndarray) -> None:
        with self._device:
            buffer.set(np.ascontiguousarray(array).reshape(buffer.shape), stream=self._stream)
            self._stream.synchronize()

    def download(self, buffer: Any, out: np.ndarray) -> None:
        with self._device:
            self._stream.synchronize()
            out[...] = buffer.get(stream=self._stream).reshape(out.shape)

    def _bytes(self, buffer: Any, offset: int, nbytes: int) -> Any:
        """Bytes [offset, offset + nbytes) of a (contiguous) CuPy array, as a uint8 view."""
        return buffer.reshape(-1).view(self._cupy.uint8)[offset : offset + nbytes]

    def read_range(self, buffer: Any, offset: int, out: np.ndarray) -> None:
        with self._device:
            data = self._bytes(buffer, offset, out.nbytes).get(stream=self._stream)
            out.reshape(-1).view(np.uint8)[...] = data

    def write_range(self, buffer: Any, offset: int, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        with self._device:
            self._bytes(buffer, offset, data.nbytes).set(data, stream=self._stream)
            self._stream.synchronize()

    def copy_range(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        with self._device, self._stream:
            self._bytes(dst, dst_offset, nbytes)[...] = self._bytes(src, src_offset, nbytes)
            self._stream.synchronize()

    def _peer_access(self, source: int) -> bool:
        """Whether this device can read ``source``'s memory, peer access enabled once."""
        if source not in self._peers:
            runtime = self._cupy.cuda.runtime
            ok = bool(runtime.deviceCanAccessPeer(self.index, source))
            if ok:
                with self._device, contextlib.suppress(Exception):  # already enabled
                    runtime.deviceEnablePeerAccess(source)
            self._peers[source] = ok
        return self._peers[source]

    def can_copy_from(self, other: Session) -> bool:
        if not isinstance(other, CudaSession):
            return False
        return route(other.index, self.index, self._peer_access(other.index)) is not CopyRoute.HOST

    def copy_from(
        self, other: Session, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int
    ) -> bool:
        if not isinstance(other, CudaSession) or not self.can_copy_from(other):
            return False  # no peer access: the caller stages through the host
        copy = peer_copy(
            DeviceBytes(other.index, src.data.ptr, src.nbytes, src_offset),
            DeviceBytes(self.index, dst.data.ptr, dst.nbytes, dst_offset),
            nbytes,
        )
        with self._device:
            self._cupy.cuda.runtime.memcpyPeerAsync(
                copy.dst_pointer, copy.dst_device, copy.src_pointer, copy.src_device,
                copy.nbytes, self._stream.ptr,
            )  # fmt: skip
            self._stream.synchronize()
        return True

    def launch(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
        repeats: int = 1,
    ) -> list[float]:
        pairs: list[tuple[Any, Any]] = []
        try:
            with self._device, self._stream:  # RawKernel launches on the current stream
                self._enqueue(kernel, global_size, local_size, args, repeats, pairs)
                self._stream.synchronize()
                return [self._cupy.cuda.get_elapsed_time(s, e) for s, e in pairs]
        except LaunchError:
            raise
        except Exception as exc:
            raise self._failed(exc, bool(pairs)) from None

    def start_launch(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
    ) -> Any:
        pairs: list[tuple[Any, Any]] = []
        try:
            with self._device, self._stream:
                self._enqueue(kernel, global_size, local_size, args, 1, pairs)
            return pairs[0]
        except LaunchError:
            raise
        except Exception as exc:
            raise self._failed(exc, bool(pairs)) from None

    def finish_launch(self, pending: Any) -> float:
        start, end = pending
        try:
            with self._device:
                end.synchronize()
                return float(self._cupy.cuda.get_elapsed_time(start, end))
        except Exception as exc:
            raise self._failed(exc, True) from None

    def _enqueue(
        self,
        kernel: CompiledKernel,
        global_size: Sequence[int],
        local_size: Sequence[int],
        args: Sequence[Any],
        repeats: int,
        pairs: list[tuple[Any, Any]],
    ) -> None:
        """Enqueue ``repeats`` launches on the session's stream (its device current), each
        between two events appended to ``pairs``."""
        cupy = self._cupy
        assert isinstance(kernel, _CudaKernel)
        block = tuple(local_size) + (1,) * (3 - len(local_size))
        grid = tuple(g // b for g, b in zip(global_size, local_size, strict=True))
        grid += (1,) * (3 - len(grid))
        if over := grid_over_limits(grid):
            raise LaunchError("GRID_TOO_LARGE", over, refused=True)
        shared, plain = launch_arguments(args, kernel.portable)
        for a in args:
            if isinstance(a, ConstantData):
                self._fill_constant(kernel, a)
        if needs_shared_optin(kernel.static_local_mem_bytes, shared):
            kernel.kernel.max_dynamic_shared_size_bytes = shared
        for _ in range(repeats):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(self._stream)
            kernel.kernel(grid, block, plain, shared_mem=shared)
            pairs.append((start, end))
            end.record(self._stream)

    def _failed(self, exc: Exception, started: bool) -> LaunchError:
        # A launch call that started nothing yet can be refused; an error at a later call
        # or at the synchronisation is a fault (CUDA reports faults asynchronously).
        phase = LaunchPhase.EXECUTION if started else LaunchPhase.ENQUEUE
        code = _error_code(exc)
        refused = is_refusal(code, phase)
        if not refused and any(s in normalise_code(code) for s in _STICKY):
            self.healthy = False
        return LaunchError(code, str(exc).splitlines()[0][:300], refused)

    def _fill_constant(self, kernel: _CudaKernel, data: ConstantData) -> None:
        """Copy ``data`` into the module's ``__constant__`` array of the same name."""
        if data.name not in kernel.constants:
            kernel.constants[data.name] = _module_global(kernel.module.module.ptr, data.name)
        found = kernel.constants[data.name]
        if found is None:
            raise LaunchError(
                "NO_CONSTANT_SYMBOL",
                f"the kernel declares no __constant__ array {data.name!r}; declare it with "
                f"CONSTANT_DECL(type, {data.name}, count) or __constant__",
            )
        address, size = found
        if data.buffer.nbytes > size:
            raise LaunchError(
                "CONSTANT_TOO_SMALL",
                f"__constant__ {data.name} holds {size} bytes, the argument has "
                f"{data.buffer.nbytes}; enlarge its declared count",
            )
        runtime = self._cupy.cuda.runtime
        runtime.memcpyAsync(
            address,
            data.buffer.data.ptr,
            data.buffer.nbytes,
            runtime.memcpyDeviceToDevice,
            self._stream.ptr,
        )

    def close(self) -> None:
        with contextlib.suppress(Exception), self._device:
            self._stream.synchronize()
