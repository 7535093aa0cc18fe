"""Compiling a tuning run's builds ahead, in parallel (``perfport tune --build-jobs N``).

A build can cost more than the trial that uses it: NVRTC spends about 2 s on each build of
the 2D convolution (its 15x15 filter unrolled over each work-item's tile), whose trials take
about 0.2 s, and a tuning run builds one at a time. Every backend keeps what it compiles in an
on-disk cache (CuPy's kernel cache, NVIDIA's OpenCL compute cache, PoCL's kernel cache), so
processes that compile the builds a strategy will ask for, in its order, let the run's worker
load them from there.
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
from typing import Any

from perfport._core import BuildError, DeviceInfo, KernelSpec
from perfport.devices import open_session

_worker: dict[str, Any] = {}  # this compiling process's spec and session


def _start(spec: KernelSpec, device: DeviceInfo, run: int) -> None:
    # Ctrl-C reaches the whole process group: the run stops us, we need not print about it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # ``run`` is the run's pid, passed in: a process that starts after the run is gone would
    # read its adopted parent from os.getppid() and wait for that forever.
    threading.Thread(target=_exit_with, args=(run,), daemon=True).start()
    _worker["spec"], _worker["session"] = spec, open_session(device)


def _exit_with(parent: int) -> None:
    """End this process once the run's process is gone (killed, it shuts no pool down)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _build(defines: dict[str, str]) -> bool:
    spec = _worker["spec"]
    try:
        _worker["session"].compile(spec.source, spec.language, spec.entry, defines)
    except BuildError:
        return False  # the run records it as a compile error when it gets there
    return True


class Prebuild:
    """``builds`` (define sets) compiled in ``jobs`` background processes, in order.
    ``close`` cancels what has not started; ``wait`` returns (built, failed)."""

    def __init__(
        self, spec: KernelSpec, device: DeviceInfo, builds: Sequence[dict[str, str]], jobs: int
    ) -> None:
        # Spawned, not forked: this process may hold a CUDA context already. The numpy
        # reference is not needed to compile, and may not pickle.
        self._pool = ProcessPoolExecutor(
            jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(dataclasses.replace(spec, reference=None, verify=None), device, os.getpid()),
        )
        self._futures: list[Future[bool]] = [self._pool.submit(_build, d) for d in builds]

    def wait(self, timeout: float | None = None) -> tuple[int, int]:
        """Wait for every build, or ``timeout`` seconds; (built, failed) among those done."""
        wait(self._futures, timeout)
        results = [f.result() for f in self._futures if f.done() and not f.cancelled()]
        return results.count(True), results.count(False)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
