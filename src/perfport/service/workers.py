"""Several daemon processes on one port (``perfport serve --workers N``): one event loop
answers one question at a time, so on a machine with several cores N processes answer N.

The parent loads the model, binds the socket and forks the workers, which share the model's
memory (copy on write, its objects frozen out of the collector's passes) and accept on the one
socket. Each worker has its own caches and compile pool. What must agree across workers goes
through shared state: refusals through the store (each worker's reads see the others' writes,
``WgService.refused_known``), the refusal writes themselves under one lock (so the caps are
exact), and the refusal gate (which (kernel, device) pairs were asked about, the rate limits)
in one small manager process that every worker asks."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.managers
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from perfport._core import PerfportError
from perfport.service.limits import GateUnavailable, RefusalGate, RefusalLimits

RESPAWNS = 5  # workers that may die young (within YOUNG_S of starting) before serve gives up
YOUNG_S = 10.0
STOP_S = 10.0  # a worker's grace to finish its requests on shutdown


def default_workers() -> int:
    """One worker per core this process may run on, at most 8 (each holds its own caches)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, 8))


def resolve(host: str, port: int) -> tuple[Any, ...]:
    """The address ``bind`` listens on for ``host``: (family, type, proto, _, address); a
    host that does not resolve is a PerfportError naming it."""
    try:
        return socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as exc:
        why = exc.strerror if isinstance(exc, socket.gaierror) else "not a valid host name"
        raise PerfportError(
            f"--host {host!r}: no address to listen on ({why}); give an address of this "
            "machine, e.g. 127.0.0.1 or 0.0.0.0"
        ) from None


def bind(host: str, port: int) -> socket.socket:
    """The listening socket the workers share. Made with its protocol named (IPPROTO_TCP):
    asyncio sets TCP_NODELAY only on such sockets, and without it every small answer waited
    for the client's delayed acknowledgement (~40 ms a round trip)."""
    family, kind, proto, _, address = resolve(host, port)
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise PerfportError(
            f"cannot listen on {host}:{port} ({exc}); give another --port"
        ) from None
    return sock


class _GateManager(multiprocessing.managers.BaseManager):
    """Serves one RefusalGate to every worker (its methods run in the manager's process)."""


_GateManager.register("RefusalGate", RefusalGate)


class SharedGate(RefusalGate):
    """A RefusalGate whose state lives in the manager process, so every worker sees every
    question and refusal. A worker remembers the pairs it has reported as asked, so a
    question costs a message to the manager only the first time a worker meets its pair."""

    def __init__(self, remote: Any, limits: RefusalLimits) -> None:
        super().__init__(limits)
        self._remote = remote

    def _call(self, method: str, *args: str) -> Any:
        # A manager that died leaves the proxy refusing connections: a 503 naming that, not
        # a 500 with a traceback (the parent starts the manager and the workers again).
        try:
            return getattr(self._remote, method)(*args)
        except (OSError, EOFError) as exc:
            raise GateUnavailable(
                "the daemon's shared-state process cannot be reached "
                f"({type(exc).__name__}); it is being restarted, retry in a few seconds"
            ) from None

    def asked(self, source_hash: str, fingerprint: str) -> None:
        key = (source_hash, fingerprint)
        if key in self._asked:
            return
        self._call("asked", source_hash, fingerprint)
        super().asked(source_hash, fingerprint)  # the local record, bounded the same way

    def was_asked(self, source_hash: str, fingerprint: str) -> bool:
        return bool(self._call("was_asked", source_hash, fingerprint))

    def take(self, fingerprint: str) -> None:
        self._call("take", fingerprint)  # raises RateLimited across the process boundary

    def problem(self) -> str | None:
        try:
            self._call("problem")
        except GateUnavailable as exc:
            return str(exc)
        return None


def run_workers(
    workers: int,
    sock: Any,
    serve_one: Callable[[Any, RefusalGate, Any], None],
    limits: RefusalLimits,
) -> None:
    """Fork ``workers`` processes that each run ``serve_one(sock, gate, write_lock)`` until
    SIGTERM or SIGINT; a worker that dies is started again, and so is the gate's manager
    (with every worker, whose proxies name the old one), unless they keep dying young (then
    PerfportError: the daemon cannot serve)."""
    ctx = multiprocessing.get_context("fork")  # the model is shared, not pickled
    manager, remote = _start_manager(ctx, limits)
    write_lock = ctx.Lock()
    stopping = False
    died_young = 0

    def stop(signum: int, _: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    def start(n: int) -> Any:
        process = ctx.Process(
            target=_worker, args=(serve_one, sock, remote, limits, write_lock),
            name=f"perfport-serve-{n}", daemon=False,
        )  # fmt: skip
        process.start()
        return process, time.monotonic()

    def died(what: str, started: float) -> None:
        nonlocal died_young
        died_young += time.monotonic() - started < YOUNG_S
        print(f"perfport serve: {what}; starting another", file=sys.stderr, flush=True)
        if died_young > RESPAWNS:
            raise PerfportError(
                f"perfport serve: workers keep exiting at start ({died_young} times); "
                "run with --workers 1 to see why"
            )

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    running = [start(n) for n in range(workers)]
    manager_started = time.monotonic()
    try:
        while not stopping:
            sentinels = [p.sentinel for p, _ in running] + [_manager_process(manager).sentinel]
            multiprocessing.connection.wait(sentinels, timeout=0.5)
            if not _manager_process(manager).is_alive() and not stopping:
                # The asked pairs and rate limits are lost with it: refusals need a question
                # first again, which a launcher's next launch asks anyway.
                died(f"the shared-state process exited ({_manager_process(manager).exitcode}); "
                     "restarting it and the workers", manager_started)  # fmt: skip
                _stop_all([p for p, _ in running])
                manager.shutdown()
                manager, remote = _start_manager(ctx, limits)
                manager_started = time.monotonic()
                running = [start(n) for n in range(workers)]
                continue
            for n, (process, started) in enumerate(running):
                if process.is_alive() or stopping:
                    continue
                died(f"worker {n} exited ({process.exitcode})", started)
                running[n] = start(n)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _stop_all([p for p, _ in running])
        manager.shutdown()


def _start_manager(ctx: Any, limits: RefusalLimits) -> tuple[_GateManager, Any]:
    manager = _GateManager(ctx=ctx)
    manager.start()
    return manager, manager.RefusalGate(limits)  # type: ignore[attr-defined]


def _manager_process(manager: _GateManager) -> Any:
    # BaseManager keeps its process private; its sentinel is how the parent sees it die.
    return manager._process  # type: ignore[attr-defined]


def _worker(
    serve_one: Callable[[Any, RefusalGate, Any], None],
    sock: Any,
    remote: Any,
    limits: RefusalLimits,
    write_lock: Any,
) -> None:
    # The parent's handlers (set before the fork) would only flag it: uvicorn sets its own.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    serve_one(sock, SharedGate(remote, limits), write_lock)


def _stop_all(processes: list[Any]) -> None:
    for process in processes:
        if process.is_alive():
            process.terminate()  # SIGTERM: uvicorn finishes the requests it has
    deadline = time.monotonic() + STOP_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
