"""Trials in a worker process: a hung kernel is killed (timeout), a dead worker is replaced
(crashed), and the campaign goes on either way.

Protocol over a pipe (parent -> worker): ("trial", config, capture) and ("stop",).
Worker -> parent: ("ready", verification) or ("setup_failed", message) once, then per trial
("built",) when the build is done (the run-time limit starts there) and
("result", measurement, healthy); an unhealthy worker exits after sending it.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import pickle
import signal
import time
from multiprocessing.connection import Connection
from typing import Any

from perfport._core import (
    Config,
    DeviceInfo,
    KernelSpec,
    Measurement,
    Outcome,
    PerfportError,
    Problem,
)
from perfport.devices import open_session
from perfport.kernels import loaded_modules, preload
from perfport.measure.settings import RunSettings
from perfport.measure.trial import TrialEngine

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies, so a kill -9'd campaign leaves no worker."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def worker_main(conn: Connection, payload: bytes) -> None:
    """Entry point of the worker process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _die_with_parent()
    modules, spec_bytes, problem, device, settings = pickle.loads(payload)
    try:
        preload(modules)
        spec: KernelSpec = pickle.loads(spec_bytes)
        session = open_session(device)
        engine = TrialEngine(session, spec, problem, settings)
        if settings.verify and spec.reference is not None:
            engine.use_reference()
    except Exception as exc:
        conn.send(("setup_failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", engine.verification))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] != "trial":
            return
        _, config, capture = message
        try:
            measurement = engine.run(
                config, on_built=lambda: conn.send(("built",)), capture=capture
            )
        except Exception as exc:  # a bug in a reference or in perfport: keep the campaign going
            measurement = Measurement(
                config, Outcome.CRASHED, f"unexpected {type(exc).__name__}: {exc}"
            )
        if capture and engine.captured is not None:
            engine.use_gold(config, engine.captured)
        healthy = engine.session.healthy
        conn.send(("result", measurement, healthy))
        if not healthy:
            return  # the context is poisoned: the parent starts a fresh worker


class Runner:
    """Measures configurations of one kernel and problem on one device, each trial in a worker
    subprocess. Use as a context manager; ``measure`` never raises for a bad configuration.

    Verification uses the spec's numpy reference, or else the output of its default
    configuration (the reference configuration), which is then measured first.
    """

    def __init__(
        self, spec: KernelSpec, problem: Problem, device: DeviceInfo, settings: RunSettings
    ) -> None:
        self.spec = spec
        self.problem = problem
        self.device = device
        self.settings = settings
        self.verification = "not verified"
        self._gold = spec.default if settings.verify and spec.reference is None else None
        self._gold_measurement: Measurement | None = None
        self._payload = pickle.dumps(
            (loaded_modules(), pickle.dumps(spec), problem, device, settings)
        )
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Connection | None = None
        self.starts = 0  # worker processes started (1 + restarts after timeouts and crashes)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- worker lifecycle ---------------------------------------------------------------
    def _start(self) -> None:
        self.starts += 1
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=worker_main, args=(child, self._payload), daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        reply = self._wait(self.settings.build_timeout_s)
        if reply is None or reply[0] != "ready":
            reason = (
                "timed out"
                if reply is None
                else reply[1]
                if reply[0] == "setup_failed"
                else self._death()
            )
            self._kill()
            raise PerfportError(f"cannot start a measurement worker on {self.device.id}: {reason}")
        self.verification = reply[1]
        if self._gold is not None:
            self._send_gold()

    def _send_gold(self) -> None:
        assert self._gold is not None
        m = self._trial(self._gold, capture=True)
        self._gold_measurement = m
        if m.ok:
            self.verification = f"reference configuration {self._gold}"
        else:  # without a working reference configuration there is nothing to compare with
            self.verification = f"not verified (reference configuration: {m.outcome.value})"
            self._gold = None

    def _wait(self, timeout: float) -> tuple[Any, ...] | None:
        """The next message, None on timeout; ("died",) when the worker is gone."""
        assert self._conn is not None
        try:
            if not self._conn.poll(timeout):
                return None
            return self._conn.recv()
        except (EOFError, OSError):
            return ("died",)

    def _death(self) -> str:
        proc = self._proc
        if proc is None:
            return "worker missing"
        proc.join(2.0)
        code = proc.exitcode
        if code is None:
            return "worker stopped answering"
        if code < 0:
            try:
                return f"worker killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"worker killed by signal {-code}"
        return f"worker exited with status {code}"

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5.0)
        if self._conn is not None:
            self._conn.close()
        self._proc, self._conn = None, None

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError, BrokenPipeError):
                self._conn.send(("stop",))
        if self._proc is not None:
            self._proc.join(2.0)
        self._kill()

    # ---- trials -------------------------------------------------------------------------
    def measure(self, config: Config) -> Measurement:
        """Measure one configuration (starting or restarting the worker as needed)."""
        if self._proc is None:
            self._start()
        if self._gold_measurement is not None and config == self._gold_measurement.config:
            m, self._gold_measurement = self._gold_measurement, None
            return m  # the reference configuration was just measured to make the gold
        if self._proc is None:  # the gold run itself killed the worker
            self._start()
        return self._trial(config, capture=False)

    def _trial(self, config: Config, capture: bool) -> Measurement:
        assert self._conn is not None
        try:
            self._conn.send(("trial", config, capture))
        except (OSError, BrokenPipeError):
            reason = self._death()
            self._kill()
            return Measurement(config, Outcome.CRASHED, reason)
        deadline = self.settings.build_timeout_s
        phase = "build"
        started = time.monotonic()
        while True:
            reply = self._wait(max(0.0, deadline - (time.monotonic() - started)))
            if reply is None:
                self._kill()
                limit = (
                    self.settings.build_timeout_s if phase == "build" else self.settings.timeout_s
                )
                return Measurement(
                    config,
                    Outcome.TIMEOUT,
                    f"no result after {limit:g} s ({phase} phase); worker killed",
                )
            if reply[0] == "built":
                phase, deadline, started = "run", self.settings.timeout_s, time.monotonic()
                continue
            if reply[0] == "result":
                _, m, healthy = reply
                if not healthy:
                    self._kill()
                return m
            reason = self._death()
            self._kill()
            return Measurement(config, Outcome.CRASHED, reason)
