"""Compiling a tuning run's builds ahead, in parallel (``perfport tune --build-jobs N``).

A build can cost more than the trial that uses it: NVRTC spends about 2 s on each build of
the 2D convolution (its 15x15 filter unrolled over each work-item's tile), whose trials take
about 0.2 s, and a tuning run builds one at a time. Every backend keeps what it compiles in an
on-disk cache (CuPy's kernel cache, NVIDIA's OpenCL compute cache, PoCL's kernel cache), so
processes that compile the builds a strategy will ask for, in its order, let the run's worker
load them from there.

Several devices tuned at once (``tune_many``) share one pool: each process opens a session on
a device the first time it compiles for it, and the devices' builds are interleaved so every
device's first trials find theirs built early.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import zip_longest
from typing import Any

from perfport._core import BuildError, DeviceInfo, KernelSpec, PerfportError
from perfport.devices import open_session

_worker: dict[str, Any] = {}  # this compiling process's spec, devices and their sessions
# The fix for a script whose compiling processes (spawned: each imports the script again) ran
# its module-level code, tune and all.
_GUARD = (
    'put the calling code under `if __name__ == "__main__":` (a spawned process imports the '
    "script again, running what is not under it), or pass build_jobs=0"
)


class PrebuildError(PerfportError):
    """The processes compiling ahead could not run (most often: a script without a main guard)."""


def refuse_in_spawned_import() -> None:
    """Refuse to tune inside a spawned process that is still importing the main script (the
    test multiprocessing itself makes before starting a process): a script without a main
    guard would otherwise open its campaign again in every compiling process."""
    if getattr(multiprocessing.process.current_process(), "_inheriting", False):
        raise PrebuildError(
            f"perfport.tune was called in a spawned process as it imported the main script again; {_GUARD}"
        )


def _start(spec: KernelSpec, device: DeviceInfo | Sequence[DeviceInfo], run: int) -> None:
    # Ctrl-C reaches the whole process group: the run stops us, we need not print about it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # ``run`` is the run's pid, passed in: a process that starts after the run is gone would
    # read its adopted parent from os.getppid() and wait for that forever.
    threading.Thread(target=_exit_with, args=(run,), daemon=True).start()
    devices = [device] if isinstance(device, DeviceInfo) else list(device)
    _worker["spec"], _worker["devices"], _worker["sessions"] = spec, devices, {}
    if len(devices) == 1:  # one device: open it now, as the run's own Runner does
        _worker["sessions"][0] = open_session(devices[0])


def _exit_with(parent: int) -> None:
    """End this process once the run's process is gone (killed, it shuts no pool down)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _build(defines: dict[str, str], which: int = 0) -> bool:
    """Compile ``defines`` for the ``which``-th device (its session opened on first use)."""
    spec, sessions = _worker["spec"], _worker["sessions"]
    if which not in sessions:
        sessions[which] = open_session(_worker["devices"][which])
    try:
        sessions[which].compile(spec.source, spec.language, spec.entry, defines, spec.include_dirs)
    except BuildError:
        return False  # the run records it as a compile error when it gets there
    return True


class Prebuild:
    """``builds`` (define sets) compiled in ``jobs`` background processes, in order.
    ``close`` cancels what has not started; ``wait`` returns (built, failed).
    ``for_devices`` compiles several devices' builds in one pool."""

    def __init__(
        self, spec: KernelSpec, device: DeviceInfo, builds: Sequence[dict[str, str]], jobs: int
    ) -> None:
        self._open_pool(spec, [device], [(0, d) for d in builds], jobs)

    @classmethod
    def for_devices(
        cls,
        spec: KernelSpec,
        plans: Sequence[tuple[DeviceInfo, Sequence[dict[str, str]]]],
        jobs: int,
    ) -> Prebuild:
        """Each (device, builds) plan's builds, in ``jobs`` processes shared by all of them:
        taken in turns (each device's first, then each one's second, ...), each in order."""
        ahead = cls.__new__(cls)
        turns = zip_longest(*[[(i, d) for d in builds] for i, (_, builds) in enumerate(plans)])
        ahead._open_pool(spec, [dev for dev, _ in plans], [b for t in turns for b in t if b], jobs)
        return ahead

    def _open_pool(
        self,
        spec: KernelSpec,
        devices: Sequence[DeviceInfo],
        builds: Sequence[tuple[int, dict[str, str]]],
        jobs: int,
    ) -> None:
        # Spawned, not forked: this process may hold a CUDA context already. The numpy
        # reference is not needed to compile, and may not pickle.
        bare = dataclasses.replace(spec, reference=None, verify=None)
        self._pool = ProcessPoolExecutor(
            jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(bare, tuple(devices), os.getpid()),
        )
        self._jobs = jobs
        try:
            self._futures: list[Future[bool]] = [
                self._pool.submit(_build, d, which) for which, d in builds
            ]
        except BrokenProcessPool:
            raise self._broken() from None

    def wait(self, timeout: float | None = None) -> tuple[int, int]:
        """Wait for every build, or ``timeout`` seconds; (built, failed) among those done."""
        wait(self._futures, timeout)
        try:
            results = [f.result() for f in self._futures if f.done() and not f.cancelled()]
        except BrokenProcessPool:
            raise self._broken() from None
        return results.count(True), results.count(False)

    def _broken(self) -> PrebuildError:
        self._pool.shutdown(wait=False, cancel_futures=True)
        return PrebuildError(
            f"the processes compiling ahead (build_jobs={self._jobs}) died; most often the "
            f"calling script has no main guard and ran again in each of them: {_GUARD}"
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
