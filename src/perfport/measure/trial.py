"""One configuration, start to finish, inside a worker: check -> build -> verify -> time.

Failures are values (a Measurement with an Outcome), never exceptions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from perfport._core import (
    ArrayArg,
    BuildError,
    Check,
    Config,
    ExpressionError,
    KernelSpec,
    LaunchError,
    Measurement,
    Outcome,
    Problem,
    ScalarArg,
)
from perfport.devices import CompiledKernel, ConstantData, LocalSpace, Session
from perfport.measure.data import host_arrays, scalar_value
from perfport.measure.settings import RunSettings
from perfport.measure.verify import Comparison, compared

_LOG_LIMIT = 4000
_BATCH_S = 1.0  # launches are enqueued back to back in batches of about this much kernel time


class TrialEngine:
    """Runs trials of one kernel and problem on one session. Builds are cached per set of
    ``-D`` defines, so launch-time parameters (work-group sizes) never rebuild."""

    def __init__(
        self,
        session: Session,
        spec: KernelSpec,
        problem: Problem,
        settings: RunSettings,
        builds: dict[tuple[tuple[str, str], ...], CompiledKernel | BuildError] | None = None,
    ) -> None:
        self.session = session
        self.spec = spec
        self.settings = settings
        self.problem = spec.problem.merged(problem)
        self.env = spec.env({}, self.problem)
        self.initial = host_arrays(spec, self.env, settings.seed)
        self.outputs = {
            a.name: np.empty_like(self.initial[a.name])
            for a in spec.args
            if isinstance(a, ArrayArg) and a.output
        }
        self.buffers = {name: session.upload(arr) for name, arr in self.initial.items()}
        # What a kernel may write: every array but the constant ones, inputs included (a
        # kernel may use an input as scratch). Reset before each configuration (_reset).
        self.writable = tuple(
            a.name for a in spec.args if isinstance(a, ArrayArg) and not a.constant
        )
        self._pristine = True  # no launch since the buffers were uploaded
        # The comparison tune and split share: tolerance (default: the least precise float
        # among the arrays), each output's atol/rtol, the ignored outputs.
        self.comparison = Comparison.of(spec, self.problem)
        self.expected: dict[str, np.ndarray] | None = None
        self.verification = "not verified"
        self.captured: dict[str, np.ndarray] | None = None
        # Shared between engines of one session when problem values are not -D defines.
        self._builds = builds if builds is not None else {}

    def use_expected(self, expected: Mapping[str, np.ndarray], label: str) -> None:
        """Verify later trials against these outputs (from a numpy reference, or captured from
        the reference configuration); ``label`` says which."""
        kept = compared({k: np.asarray(v) for k, v in expected.items()}, self.comparison.ignored)
        # Every output ignored: nothing is compared, and results say they are unverified.
        self.expected = kept or None
        self.verification = label if kept else "not verified (every output is ignored)"

    # ---- one trial --------------------------------------------------------------------
    def run(
        self,
        config: Config,
        alive: Callable[[], None] = lambda: None,
        capture: bool = False,
        verify: bool = True,
    ) -> Measurement:
        """Measure ``config``. ``alive`` is called after the build and after every batch of
        launches (batches last about a second), so a watchdog can tell slow from hung. With
        ``capture``, keep the outputs of one launch from the initial state in
        ``self.captured`` (to serve as the gold of later trials). ``verify=False`` skips the
        check against the expected outputs for this trial."""
        spec, device = self.spec, self.session.device
        self.captured = None
        env = spec.env(config, self.problem)

        def result(outcome: Outcome, message: str = "", **kw: Any) -> Measurement:
            return Measurement(config, outcome, message, **kw)

        try:
            geometry = spec.geometry(env)
            dynamic = spec.local_arg_bytes(env)
            defines = tuple(spec.build_defines(env).items())
            args = [self._argument(a, dynamic, env) for a in spec.args]
        except ExpressionError as exc:
            return result(Outcome.PRUNED, f"launch shape cannot be computed: {exc}")
        refusal = _device_limits(
            geometry.global_size, geometry.local_size, geometry.local_mem_bytes, device
        )
        if refusal:
            return result(Outcome.PRUNED, refusal)

        started = time.perf_counter()
        built = self._build(defines)
        compile_ms = (time.perf_counter() - started) * 1000.0
        alive()
        if isinstance(built, BuildError):
            log = f"{built}\n{built.log}"[:_LOG_LIMIT]
            return result(Outcome.COMPILE_ERROR, log, compile_ms=compile_ms)
        laid_out = built.dynamic_local_bytes(list(dynamic.values()))
        if (needed := built.static_local_mem_bytes + laid_out) > device.local_mem_bytes:
            return result(
                Outcome.PRUNED,
                f"needs {needed} bytes of local memory ({built.static_local_mem_bytes} static + "
                f"{laid_out} dynamic); the device has {device.local_mem_bytes}",
                compile_ms=compile_ms,
            )

        expected = self.expected if self.settings.verify and verify else None
        try:
            self._reset()
            # A kernel with a fault flag is always checked once: the flag is its own verdict.
            if expected is not None or capture or spec.fault_flag:
                self.session.launch(built, geometry.global_size, geometry.local_size, args)
                alive()
                outputs = self._read_outputs()
                if fault := _flagged(spec.fault_flag, outputs):
                    return result(Outcome.WRONG_RESULT, fault, compile_ms=compile_ms)
                if expected is not None and (
                    problem := self.comparison.mismatch(outputs, expected)
                ):
                    return result(
                        Outcome.WRONG_RESULT, _noted(built, problem), compile_ms=compile_ms,
                        check=Check.VERIFIED, verified_against=self.verification,
                    )  # fmt: skip
                if capture:
                    self.captured = {k: v.copy() for k, v in outputs.items()}
            times = self._time(built, geometry.global_size, geometry.local_size, args, alive)
        except LaunchError as exc:
            # Only a refusal before execution is launch_refused (it feeds the work-group
            # predictor's fallbacks); a fault is the kernel's, with the driver's message alone.
            if exc.refused and self.session.healthy:
                note = _over_limit(geometry.local_size, built)
                return result(Outcome.LAUNCH_REFUSED, f"{exc}{note}", compile_ms=compile_ms)
            return result(Outcome.CRASHED, f"kernel fault: {exc}", compile_ms=compile_ms)
        note = _noted(built, _over_limit(geometry.local_size, built).strip())
        if expected is not None:
            checked: dict[str, Any] = {
                "check": Check.VERIFIED,
                "verified_against": self.verification,
            }
        else:
            checked = {"check": Check.REFERENCE if capture else Check.UNVERIFIED}
        return result(Outcome.OK, note, times_ms=tuple(times), compile_ms=compile_ms, **checked)

    # ---- helpers ----------------------------------------------------------------------
    def _build(self, defines: tuple[tuple[str, str], ...]) -> CompiledKernel | BuildError:
        if defines not in self._builds:
            try:
                spec = self.spec
                self._builds[defines] = self.session.compile(
                    spec.source, spec.language, spec.entry, dict(defines), spec.include_dirs
                )
            except BuildError as exc:
                self._builds[defines] = exc
        return self._builds[defines]

    def _argument(self, arg: Any, dynamic: Mapping[str, int], env: Mapping[str, Any]) -> Any:
        if isinstance(arg, ArrayArg):
            buffer = self.buffers[arg.name]
            return ConstantData(arg.name, buffer) if arg.constant else buffer
        if isinstance(arg, ScalarArg):
            return scalar_value(self.spec, arg, env)  # per trial: it may use parameters
        return LocalSpace(dynamic[arg.name])

    def _reset(self) -> None:
        """Give every array the kernel may write its seeded contents again, before the first
        launch of a configuration, verified or not: each configuration then starts from the
        same data (a kernel that writes nothing fails verification, in-place kernels see their
        inputs, data-dependent work is the same for all). Its repetitions run on what the
        previous one left. One upload per array and configuration, none before the first."""
        if not self._pristine:
            for name in self.writable:
                self.session.write(self.buffers[name], self.initial[name])
        self._pristine = False  # the launches follow

    def _read_outputs(self) -> dict[str, np.ndarray]:
        """The outputs, downloaded into reused host arrays (copy them to keep them)."""
        for name, out in self.outputs.items():
            self.session.download(self.buffers[name], out)
        return self.outputs

    def _time(
        self,
        kernel: CompiledKernel,
        global_size: tuple[int, ...],
        local_size: tuple[int, ...],
        args: list[Any],
        alive: Callable[[], None],
    ) -> list[float]:
        timing = self.settings.timing

        def launch(repeats: int) -> list[float]:
            times = self.session.launch(kernel, global_size, local_size, args, repeats)
            alive()
            return times

        for _ in range(timing.warmup):
            launch(1)
        times = launch(1)
        remaining = timing.repeats(times[0]) - 1
        per_batch = launches_per_batch(times[0], self.settings.timeout_s)
        while remaining > 0:
            times += launch(min(per_batch, remaining))
            remaining -= per_batch
        return times


def launches_per_batch(launch_ms: float, timeout_s: float) -> int:
    """How many launches of ``launch_ms`` to enqueue back to back between two signs of life:
    about ``_BATCH_S`` of kernel time, and at most a quarter of the time limit, which the
    worker's watchdog applies to each batch (the limit is meant for one launch)."""
    batch_s = min(_BATCH_S, timeout_s / 4.0)
    return max(1, int(batch_s * 1000.0 / max(launch_ms, 1e-6)))


def _flagged(flag: str, outputs: Mapping[str, np.ndarray]) -> str:
    """Why the kernel's own fault flag condemns this trial, or '' (no flag, or zero)."""
    if not flag or not outputs[flag].any():
        return ""
    value = int(outputs[flag].reshape(-1)[0])
    return f"the kernel flagged a fault of its own at run time: {flag} = {value}"


def _over_limit(local_size: tuple[int, ...], kernel: CompiledKernel) -> str:
    """A note when the work-group exceeds the driver's per-kernel limit. That limit is
    advisory: NVIDIA's OpenCL reports 256 (CL_KERNEL_WORK_GROUP_SIZE) for kernels it runs
    correctly with 1024, so the launch is tried and the driver's answer recorded."""
    work_items = math.prod(local_size)
    if work_items <= kernel.max_work_group_size:
        return ""
    return (
        f" ({work_items} work-items per group; the driver reports a per-kernel limit of "
        f"{kernel.max_work_group_size})"
    )


def _device_limits(
    global_size: tuple[int, ...], local_size: tuple[int, ...], local_mem: int, device: Any
) -> str:
    """Why the device cannot launch this shape, or '' if it can (checked before any build)."""
    if any(n < 1 for n in local_size) or any(n < 1 for n in global_size):
        return f"sizes must be positive: global {global_size}, local {local_size}"
    if any(g % lo for g, lo in zip(global_size, local_size, strict=True)):
        return f"global size {global_size} is not a multiple of local size {local_size}"
    if math.prod(local_size) > device.max_work_group_size:
        return f"{math.prod(local_size)} work-items per group exceed the device's {device.max_work_group_size}"
    for dim, (n, limit) in enumerate(zip(local_size, device.max_work_item_sizes, strict=False)):
        if n > limit:
            return f"local size {n} in dimension {dim} exceeds the device's {limit}"
    if local_mem > device.local_mem_bytes:
        return f"needs {local_mem} bytes of local memory; the device has {device.local_mem_bytes}"
    return ""


def _noted(built: CompiledKernel, message: str) -> str:
    """``message`` and the compiler's warnings on one line: the result's message is where a
    user reads them (results, exports), not the terminal over the progress display."""
    log = " | ".join(line.strip() for line in built.build_log.splitlines() if line.strip())
    return "; ".join(filter(None, [message, f"compiler output: {log}" if log else ""]))
