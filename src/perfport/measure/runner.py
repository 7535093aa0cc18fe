"""Trials in a worker process: a hung kernel is killed (timeout), a dead worker is replaced
(crashed), and the campaign goes on either way.

The worker is ``python -m perfport.measure.worker`` in its own session (Ctrl-C is the
parent's), dying with its parent. It never imports user code: the numpy reference runs here,
once, and the worker receives the expected outputs. Protocol, over two pipes:
parent -> worker: (spec, problem, device, settings, expected, label) once, then
("trial", config, capture, hand_back) per trial (hand_back: send the outputs back unchecked,
for the spec's verify function to judge here), ("expect", outputs, label) when reference outputs
were captured, and ("stop",) at the end.
worker -> parent: ("ready", verification) or ("setup_failed", message) once, then per trial
("alive",) after the build and after each batch of launches (each restarts the time limit)
and ("result", measurement, healthy, captured), captured being the outputs of a capture
trial that ran correctly (else None); an unhealthy worker exits after sending it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import (
    ArrayArg,
    Check,
    Config,
    DeviceInfo,
    KernelSpec,
    Measurement,
    Outcome,
    PerfportError,
    Problem,
    SpecError,
)
from perfport.measure.data import reference_outputs, reference_spec
from perfport.measure.settings import RunSettings, Timing
from perfport.measure.verify import Comparison, compared, nonfinite_output
from perfport.space import excluded_by

KILLED = "worker killed by SIGKILL"  # _death's reason for a kill -9 from outside
KILLED_RETRIES = 3  # tries of one configuration whose worker was killed from outside


class Runner:
    """Measures configurations of one kernel and problem on one device, each trial in a worker
    process. Use as a context manager; ``measure`` never raises for a bad configuration.

    Verification uses the spec's numpy reference, or else the output of its default
    configuration (the reference configuration), which is then measured first. When the
    default configuration fails, writes only NaN or infinity to a float output, or the kernel
    has none, the first configuration that runs (with finite outputs) becomes the reference,
    and ``verification`` says so. The parent keeps the reference
    outputs, so a restarted worker verifies against the same ones.
    """

    def __init__(
        self, spec: KernelSpec, problem: Problem, device: DeviceInfo, settings: RunSettings
    ) -> None:
        self.spec = spec
        self.problem = problem
        self.device = device
        self.settings = settings
        self.verification = "not verified"
        # Without a numpy reference or reference kernel, trials capture their outputs until one
        # becomes the reference: the default configuration's, measured first, else the next
        # that runs.
        # A verify function is user code, which the worker never imports: the worker hands
        # each trial's outputs back and the function runs here.
        self._hand_back = settings.verify and spec.verify is not None
        outputs = [a for a in spec.args if isinstance(a, ArrayArg) and a.output]
        self._ignored = frozenset(a.name for a in outputs if a.ignore)
        comparable = self._hand_back or len(self._ignored) < len(outputs)
        self._capturing = (
            comparable and settings.verify and spec.reference is None and not spec.reference_kernel
        )
        self._last_outputs: dict[str, np.ndarray] | None = None
        self._gold = spec.default if self._capturing else None
        self._gold_measurement: Measurement | None = None
        self._expected: dict[str, np.ndarray] | None = None
        self._label = "not verified"  # what _expected are
        self.reference_note = (  # why the default configuration is not the reference
            "the kernel has no default configuration"
            if self._capturing and spec.default is None
            else ""
        )
        # A default the kernel's own restrictions exclude (at this problem) may compute
        # anything: its outputs must not judge the configurations that keep them.
        gold = self._gold
        if gold is not None and (broken := excluded_by(spec, gold, problem)):
            self.forgo(gold, f"breaks the kernel's restriction {broken}")
        self._proc: subprocess.Popen[bytes] | None = None
        self._inbox: Connection | None = None
        self._outbox: Connection | None = None
        self.starts = 0  # worker processes started (1 + restarts after timeouts and crashes)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- worker lifecycle ---------------------------------------------------------------
    def _start(self) -> None:
        if self.settings.verify and self.spec.reference is not None and self._expected is None:
            self._expected = reference_outputs(self.spec, self.problem, self.settings.seed)
            self._label = "numpy reference"
        elif self.settings.verify and self.spec.reference_kernel and self._expected is None:
            self._expected = self._reference_kernel_outputs()
            self._label = f"reference kernel {self.spec.reference_kernel.entry}"
        self.starts += 1
        to_child, from_parent = os.pipe()
        to_parent, from_child = os.pipe()
        src = str(Path(__file__).resolve().parents[2])  # the directory holding perfport
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
        }
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "perfport.measure.worker", str(to_child), str(from_child)],
            pass_fds=(to_child, from_child),
            stdin=subprocess.DEVNULL,
            stdout=2,  # the real stderr: driver chatter must not mix with --json output
            env=env,
            start_new_session=True,
        )
        os.close(to_child)
        os.close(from_child)
        self._outbox = Connection(from_parent, readable=False)
        self._inbox = Connection(to_parent, writable=False)
        setup = (
            dataclasses.replace(self.spec, reference=None, verify=None),
            self.problem,
            self.device,
            self.settings,
            self._expected,
            self._label,
        )
        reply = self._send(setup) and self._wait(self.settings.build_timeout_s)
        if not reply or reply[0] != "ready":
            reason = (
                "timed out"
                if reply is None
                else reply[1]
                if reply and reply[0] == "setup_failed"
                else self._death()
            )
            self._kill()
            raise PerfportError(f"cannot start a measurement worker on {self.device.id}: {reason}")
        self.verification = reply[1]
        if self._gold is not None:
            self._make_gold()

    def forgo(self, config: Config, reason: str) -> None:
        """Never run ``config`` to make the reference outputs (it is known to fail: ``reason``);
        the first configuration that runs serves instead."""
        if self._gold is not None and config == self._gold:
            self._gold = None
            self.reference_note = f"the default configuration {config} {reason}"
            self.verification = f"not verified yet ({self.reference_note})"

    def _make_gold(self) -> None:
        """Measure the default configuration, keeping its outputs as the reference."""
        assert self._gold is not None
        gold, self._gold = self._gold, None  # tried once: a failure does not repeat
        m = self._trial(gold, capture=True)
        self._gold_measurement = m
        if not m.ok:  # the next configuration that runs serves instead
            self.reference_note = f"the default configuration {gold} gave {m.outcome.value}"
            self.verification = f"not verified yet ({self.reference_note})"

    def _reference_kernel_outputs(self) -> dict[str, np.ndarray]:
        """Run the spec's reference kernel once, in a worker of its own, for its outputs."""
        ref = reference_spec(self.spec)
        assert ref.default is not None
        once = dataclasses.replace(self.settings, verify=False, timing=Timing.fixed(1, warmup=0))
        with Runner(ref, self.problem, self.device, once) as runner:
            m, outputs = runner.outputs_of(ref.default)
        if outputs is None:
            first = (m.message.strip().splitlines() or [""])[0][:200]
            raise SpecError(
                f"kernel {self.spec.name}: the reference kernel {ref.entry} gave "
                f"{m.outcome.value} ({first}); fix the reference kernel"
            )
        return outputs

    def outputs_of(self, config: Config) -> tuple[Measurement, dict[str, np.ndarray] | None]:
        """Measure ``config`` and return its outputs too (None when it did not run)."""
        if self._proc is None:
            self._start()
        m = self._trial(config, capture=True)
        return m, self._last_outputs if m.ok else None

    def _checked(self, m: Measurement, outputs: dict[str, np.ndarray]) -> Measurement:
        """A trial's outcome after the spec's verify function has judged its outputs."""
        assert self.spec.verify is not None and self._expected is not None
        # The comparison split uses too; with a verify function it needs no tolerance.
        judge = Comparison(None, {}, self._ignored, self.spec.verify)
        problem = judge.mismatch(outputs, self._expected)
        against = f"{self._label} (verify function {getattr(self.spec.verify, '__name__', '?')})"
        if problem is None:
            return dataclasses.replace(m, check=Check.VERIFIED, verified_against=against)
        return dataclasses.replace(
            m, outcome=Outcome.WRONG_RESULT, message=problem, times_ms=(), stats=None,
            check=Check.VERIFIED, verified_against=against,
        )  # fmt: skip

    def _adopt(self, config: Config, outputs: dict[str, np.ndarray]) -> None:
        """Verify later trials against ``outputs`` of ``config`` (here and in any worker
        started later)."""
        self._capturing = False
        self._expected = outputs
        self._label = f"reference configuration {config}"
        if self.reference_note:
            self._label += f" ({self.reference_note}; the first configuration that ran serves)"
        self.verification = self._label
        if self._proc is not None:  # else the next worker gets them at its start
            self._send(("expect", outputs, self._label))

    def _passed_over(self, m: Measurement, output: str) -> Measurement:
        """``m`` ran, but its ``output`` holds only NaN or infinity: it is not made the
        reference (the next configuration that runs is tried), and its result is unverified."""
        why = f"wrote no finite value to output {output!r} (NaN or infinity everywhere)"
        if m.config == self.spec.default and not self.reference_note:
            self.reference_note = f"the default configuration {m.config} {why}"
            self.verification = f"not verified yet ({self.reference_note})"
        note = f"not verified: it {why}, so it is not the reference"
        message = "; ".join(filter(None, [note, m.message]))
        return dataclasses.replace(m, check=Check.UNVERIFIED, message=message)

    def _send(self, message: Any) -> bool:
        assert self._outbox is not None
        try:
            self._outbox.send(message)
            return True
        except OSError:
            return False

    def _wait(self, timeout: float) -> tuple[Any, ...] | None:
        """The next message, None on timeout; ("died",) when the worker is gone."""
        assert self._inbox is not None
        try:
            if not self._inbox.poll(timeout):
                return None
            return self._inbox.recv()
        except (EOFError, OSError):
            return ("died",)

    def _death(self) -> str:
        if self._proc is None:
            return "worker missing"
        try:
            code = self._proc.wait(2.0)
        except subprocess.TimeoutExpired:
            return "worker stopped answering"
        if code < 0:
            try:
                return f"worker killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"worker killed by signal {-code}"
        return f"worker exited with status {code}"

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(5.0)
        for conn in (self._inbox, self._outbox):
            if conn is not None:
                conn.close()
        self._proc = self._inbox = self._outbox = None

    def close(self) -> None:
        if self._proc is not None:
            self._send(("stop",))
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(2.0)
        self._kill()

    # ---- trials -------------------------------------------------------------------------
    def measure(self, config: Config) -> Measurement:
        """Measure one configuration (starting or restarting the worker as needed)."""
        if self._proc is None:
            self._start()
        if self._gold_measurement is not None and config == self._gold_measurement.config:
            m, self._gold_measurement = self._gold_measurement, None
            return m  # the reference configuration was just measured to make the gold
        for _ in range(KILLED_RETRIES):
            if self._proc is None:  # the gold run, or the last try, ended the worker
                self._start()
            m = self._trial(config, capture=self._capturing)
            # SIGKILL comes from outside (an operator, the OOM killer), never from a kernel's
            # fault: measure again on a fresh worker rather than store the kernel as crashed.
            if m.outcome is not Outcome.CRASHED or m.message != KILLED:
                return m
        return m

    def _trial(self, config: Config, capture: bool) -> Measurement:
        if not self._send(("trial", config, capture, self._hand_back)):
            reason = self._death()
            self._kill()
            return Measurement(config, Outcome.CRASHED, reason)
        phase, limit = "build", self.settings.build_timeout_s
        started = time.monotonic()
        while True:
            reply = self._wait(max(0.0, limit - (time.monotonic() - started)))
            if reply is None:
                self._kill()
                what = "the build" if phase == "build" else "a launch"
                return Measurement(
                    config,
                    Outcome.TIMEOUT,
                    f"{what} did not finish within {limit:g} s; worker killed",
                )
            if reply[0] == "alive":
                phase, limit, started = "run", self.settings.timeout_s, time.monotonic()
                continue
            if reply[0] == "result":
                _, m, healthy, captured = reply
                if not healthy:
                    self._kill()
                self._last_outputs = captured
                if capture and captured is not None and m.ok:
                    if self._capturing and (
                        bad := nonfinite_output(compared(captured, self._ignored))
                    ):
                        m = self._passed_over(m, bad)
                    else:
                        self._adopt(config, captured)
                elif self._hand_back and captured is not None and m.ok:
                    m = self._checked(m, captured)
                return m
            reason = self._death()
            self._kill()
            return Measurement(config, Outcome.CRASHED, reason)
