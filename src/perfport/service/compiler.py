"""Compiling client kernels for their features away from the daemon's event loop: each build
runs in a fresh process with a time limit and an address-space limit (``setrlimit`` in the
child), at most ``workers`` at once, so a compile bomb costs one process its limits and the
daemon keeps answering. Counts, and the compiler's own errors, are remembered per kernel
source and defines; a build the daemon's limits stopped (its time on a loaded machine, its
memory) is the daemon's passing problem (``CompileUnfinished``, a 503), never remembered."""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import multiprocessing.connection
import subprocess
import sys
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from perfport._core import (
    BuildError,
    DeviceError,
    KernelSpec,
    MissingExtra,
    PerfportError,
    SpecError,
)
from perfport.features.ir import (
    bitcode_of,
    cached_classes,
    class_counts,
    opcode_counts,
    pocl_device_id,
    remember_classes,
)
from perfport.kernels.client_source import first_error_line

FAILURES_KEPT = 4096
PROBE_S = 60.0  # for the start-up probe: finding OpenCL's platforms can take a while
SERVE_FIX = "pip install 'perfport[serve]'"


# OpenCL errors that say the compiler ran out of something, not that the source is wrong.
_RESOURCE_ERRORS = ("OUT_OF_HOST_MEMORY", "OUT_OF_RESOURCES", "MEM_OBJECT_ALLOCATION_FAILURE")


class ServiceBusy(PerfportError):
    """The daemon cannot do the work now (every compile slot stayed busy for the whole time
    limit; another process holds its database's write lock): its problem, not the client's,
    who should retry (503 with Retry-After)."""


class CompileUnfinished(ServiceBusy):
    """A build was stopped by the daemon's limits (its wall-clock time, which a loaded machine
    can overrun: ``timed_out``; or its memory) before the compiler said anything of the
    source. Not remembered: a retry compiles again."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class _Uncompilable(Exception):
    """The compiler's own diagnostic (``reason``, one line); raised as a SpecError under the
    asking client's kernel name, since the same body may come under several."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _does_not_compile(spec: KernelSpec, reason: str) -> SpecError:
    return SpecError(f"kernel {spec.name} does not compile: {reason}; fix its body")


@dataclass(frozen=True)
class CompileLimits:
    time_s: float = 10.0  # wall clock for one build, process start included
    memory_bytes: int = 2 << 30  # address space of the compiling process (PoCL needs ~1 GiB)
    workers: int = 2  # builds at once


def _context() -> Any:
    # forkserver: children fork from a small clean process (no event loop, no threads, no
    # OpenCL state); the modules a build needs are imported there once.
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["perfport.service.compiler", "pyopencl", "llvmlite.binding"])
        return ctx
    return multiprocessing.get_context("spawn")


def _limit(limits: CompileLimits) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the parent's wall-clock limit still applies
        return
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    cpu = math.ceil(limits.time_s) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def features_problem() -> str | None:
    """Why this process cannot compile kernels for their features (no llvmlite, no PoCL CPU
    device), or None. Starts OpenCL: call it in a compiling process, never in the daemon's."""
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        why = "the Python package 'llvmlite' is not installed"
    else:
        try:
            pocl_device_id()
            return None
        except DeviceError:
            why = "no PoCL CPU device (OpenCL) was found"
    return features_missing(why)


def features_missing(why: str) -> str:
    """The one line saying the daemon cannot compute kernel features, ``why``, and the fix."""
    return (
        f"the daemon cannot compile kernels for their features: {why}; install what it needs "
        f"with: {SERVE_FIX} (or give it a model from 'perfport wg train --compile-free')"
    )


def limits_problem(limits: CompileLimits) -> str | None:
    """Why no kernel can compile under ``limits`` on this machine (a memory limit below what
    its compiler needs to build even a built-in stencil), or None. Compiles one: call it in a
    probing process (``probe_features``), never in the daemon's."""
    from perfport.kernels import builtin

    spec = builtin("sobel")
    try:
        CompilePool(limits).counts(spec, spec.build_defines(spec.env({}, spec.problem)))
    except CompileUnfinished as exc:
        if exc.timed_out:  # a busy machine, not the limit: the first question will tell
            return None
        given, default = limits.memory_bytes >> 20, CompileLimits().memory_bytes >> 20
        return (
            f"--compile-memory-mb {given}: this machine's compiler cannot build even the "
            f"built-in stencil sobel within {given} MiB, so every kernel the daemon must "
            f"compile would fail; give more (the default is {default})"
        )
    except PerfportError:
        return None  # the kernel's or the installation's: not the limits'
    return None


def probe_features(limits: CompileLimits | None = None, timeout_s: float = PROBE_S) -> str | None:
    """``features_problem`` asked of a fresh interpreter (the daemon's process keeps no OpenCL
    state), and with ``limits``, then ``limits_problem``; None also when the probe cannot tell
    in time (the first build will)."""
    code = "from perfport.service.compiler import features_problem as f; print(f() or '')"
    if limits is not None:
        code = (
            "from perfport.service.compiler import CompileLimits, features_problem as f, "
            f"limits_problem as g; print(f() or g(CompileLimits({limits.time_s!r}, "
            f"{limits.memory_bytes!r}, 1)) or '')"
        )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if done.returncode == 0 and lines else None


def _child(
    conn: multiprocessing.connection.Connection,
    spec: KernelSpec,
    defines: dict[str, str],
    limits: CompileLimits,
) -> None:
    _limit(limits)
    from perfport.devices import list_devices, open_session

    try:
        device = next(d for d in list_devices() if d.id == pocl_device_id())
        compiled = open_session(device).compile(spec.source, spec.language, spec.entry, defines)
        binary = compiled.program.binaries[0]  # type: ignore[attr-defined]
        conn.send(("ok", class_counts(opcode_counts(bitcode_of(binary)))))
    except BuildError as exc:
        log = exc.log or str(exc)
        if any(error in log for error in _RESOURCE_ERRORS):  # the limits', not the source's
            conn.send(("unfinished", "the compiler ran out of memory"))
            return
        # Only the first error line, without paths: a log can quote whatever the build read.
        conn.send(("spec", first_error_line(log)))
    except MemoryError:
        conn.send(("unfinished", "the compiler ran out of memory"))
    except (MissingExtra, DeviceError) as exc:
        # The daemon's installation only when it lacks llvmlite or PoCL: a one-off device
        # failure (a context refused under this child's memory limit) must not mark every
        # later build as impossible until a restart.
        missing = features_problem()
        conn.send(("missing", missing) if missing else ("error", str(exc).splitlines()[0][:300]))
    except PerfportError as exc:
        conn.send(("error", str(exc).splitlines()[0][:300]))


class CompilePool:
    """Instruction counts of kernels, each compiled in its own limited process. Blocking:
    call ``counts`` from a worker thread, never on an event loop. Thread-safe."""

    def __init__(self, limits: CompileLimits | None = None) -> None:
        self.limits = limits or CompileLimits()
        self._ctx = _context()
        self._slots = threading.BoundedSemaphore(self.limits.workers)
        self._lock = threading.Lock()
        self._inflight: dict[bytes, Future[dict[str, int]]] = {}
        self._failures: dict[bytes, str] = {}  # digest -> the compiler's one-line reason
        # What this daemon lacks to compile any kernel, once a build found it (health says so).
        self.missing: str | None = None

    def start(self) -> None:
        """Start the fork server now, so the first build does not pay for it."""
        if self._ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()

    def counts(self, spec: KernelSpec, defines: Mapping[str, str]) -> dict[str, int]:
        known = cached_classes(spec, defines)
        if known is not None:
            return known
        if self.missing is not None:  # no build can succeed until the daemon is fixed
            raise MissingExtra(self.missing)
        key = hashlib.blake2b(
            repr((spec.source_hash, sorted(defines.items()))).encode(), digest_size=16
        ).digest()
        with self._lock:
            if key in self._failures:
                raise _does_not_compile(spec, self._failures[key])
            future = self._inflight.get(key)
            owner = future is None
            if future is None:  # one build per kernel, however many ask at once
                future = self._inflight[key] = Future()
        try:
            if not owner:
                return future.result()
            try:
                counts = self._build(spec, dict(defines))
            except BaseException as exc:
                if isinstance(exc, _Uncompilable):
                    with self._lock:
                        if len(self._failures) >= FAILURES_KEPT:
                            self._failures.clear()
                        self._failures[key] = exc.reason
                future.set_exception(exc)
                raise
            finally:
                with self._lock:
                    del self._inflight[key]
        except _Uncompilable as exc:
            raise _does_not_compile(spec, exc.reason) from None
        remember_classes(spec, defines, counts)
        future.set_result(counts)
        return counts

    def _build(self, spec: KernelSpec, defines: dict[str, str]) -> dict[str, int]:
        limit = self.limits.time_s
        if not self._slots.acquire(timeout=limit):
            raise ServiceBusy(
                f"the daemon is compiling {self.limits.workers} other kernels; retry in a while"
            )
        try:
            receiver, sender = self._ctx.Pipe(duplex=False)
            process = self._ctx.Process(
                target=_child, args=(sender, spec, defines, self.limits), daemon=True
            )
            process.start()
            sender.close()  # so the child's death reads as end of file here
            try:
                if not receiver.poll(limit):
                    raise CompileUnfinished(
                        f"kernel {spec.name}: compiling it did not finish within the daemon's "
                        f"limit of {limit:g} s (the machine may be busy); retry in a while",
                        timed_out=True,
                    )
                try:
                    status, value = receiver.recv()
                except EOFError:  # killed by a limit: over its memory, or its CPU time
                    status, value = "unfinished", "the compiler process was stopped"
            finally:
                if process.is_alive():
                    process.kill()
                process.join()
                receiver.close()
        finally:
            self._slots.release()
        if status == "ok":
            return dict(value)
        if status == "missing":
            self.missing = value
            raise MissingExtra(value)
        if status == "unfinished":
            raise CompileUnfinished(
                f"kernel {spec.name}: {value} under the daemon's limits ("
                f"{self.limits.memory_bytes >> 20} MiB, {limit:g} s); retry in a while, or ask "
                "its operator for a larger --compile-memory-mb"
            )
        if status == "spec":
            raise _Uncompilable(value)
        raise PerfportError(value)
