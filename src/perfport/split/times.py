"""Each device's time on the whole problem, for planning a split without running the problem
on every device (erdem2018 section 2.2: "measured, or predicted by a model").

``measured`` (the default) runs the whole problem alone on each device. ``store`` reads the
time ``perfport tune`` stored for the device's chosen configuration. ``model`` predicts it
from the kernel's declared work and the device's ceilings (``perfport roofline``): the time
the roofline allows, max(bytes / copy bandwidth, flops / peak). That prediction is
optimistic: a kernel rarely reaches its ceiling, and by a different margin on each device,
so the split factors it gives are only as good as those margins are alike. ``--plan lines``'
probe runs the planned parts together and re-plans from the measured part times, which
corrects what the prediction got wrong.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from enum import Enum

from perfport._core import Config, DeviceInfo, KernelSpec, Problem, SpecError
from perfport._core.metrics import Ceilings, ResultMetrics
from perfport.store import BestResult, Store, best_results, stored_ceilings


class TimeSource(Enum):
    """Where each device's time, the plan's input, comes from."""

    MEASURED = "measured"  # the whole problem alone on every device
    STORE = "store"  # perfport tune's stored time of the chosen configuration
    MODEL = "model"  # the roofline's time from the stored ceilings
    GIVEN = "given"  # the caller's own times (split_run's ``times``): any model's

    @classmethod
    def parse(cls, text: str | TimeSource) -> TimeSource:
        if isinstance(text, TimeSource):
            return text
        try:
            return cls(text)
        except ValueError:
            names = ", ".join(s.value for s in cls if s is not cls.GIVEN)
            raise SpecError(f"--times {text!r}: give one of {names}") from None


def problem_args(problem: Problem) -> str:
    """``problem`` as ``--problem`` takes it, each value quoted where a shell needs it."""
    return " ".join(shlex.quote(f"{k}={v}") for k, v in problem.items())


def spec_results(store: Store, spec: KernelSpec, device: DeviceInfo) -> list[BestResult]:
    """The stored bests of the spec's source on ``device``, those of the spec's own name first:
    specs over one source (other parameters) are kernels of their own, and a store written
    before kernels were told apart by name may hold the spec's results under another."""
    found = best_results(store, spec.source_hash, device.fingerprint)
    return sorted(found, key=lambda r: r.kernel != spec.name)


def stored_ms(
    spec: KernelSpec,
    problem: Problem,
    device: DeviceInfo,
    config: Config,
    store: Store,
    kernel_arg: str | None = None,
) -> float:
    """The stored tuned time (median kernel time) of ``config`` on ``device`` at ``problem``:
    the best configuration's, or the default's when that is the one chosen. ``kernel_arg``
    names the kernel in the hint's command (the CLI's KERNEL: a spec file's path; default
    the spec's name)."""
    found = [r for r in spec_results(store, spec, device) if r.problem == problem]
    for r in found:
        if r.best == config and r.best_ms is not None:
            return r.best_ms
        if r.default == config and r.default_ms is not None:
            return r.default_ms
    what = f"no time of {dict(config)} is stored" if found else "no tuned result is stored"
    raise SpecError(
        f"--times store: {what} for {spec.name} on {device.id} at this problem; run 'perfport "
        f"tune {shlex.quote(kernel_arg or spec.name)} --device {device.id} --problem "
        f"{problem_args(problem)} --db {shlex.quote(store.path)}' first"
    )


def check_work(spec: KernelSpec) -> None:
    """A model time needs the kernel's declared work."""
    if spec.bytes is None and spec.flops is None:
        raise SpecError(
            f"--times model: kernel {spec.name} declares neither bytes nor flops; state its "
            "work in its KernelSpec (bytes=, flops=; docs/roofline.md), or use --times store"
        )


def roofline_ms(
    spec: KernelSpec, problem: Problem, config: Config, ceilings: Ceilings, device: str = "?"
) -> float:
    """The time the roofline allows ``spec`` at ``problem`` and ``config``: max(declared bytes
    / copy bandwidth, declared flops / peak). The bandwidth is the copy curve's at the
    kernel's own bytes where one is stored (a small copy pays a launch's fixed cost, and so
    does a small kernel), else the copy ceiling; the peak is that of the precision of the
    kernel's first output array, as the roofline fraction of ``perfport results`` takes it
    (fp64 for a 64-bit float, else fp32; a kernel of mixed precision is judged by its
    output)."""
    check_work(spec)
    scoring = ResultMetrics.of(spec.describe(), problem, ceilings)
    env = scoring.env(config)
    work = spec.metric_set.work(env)
    times = []
    if "bytes" in work:
        bandwidth = ceilings.copy_at(work["bytes"]) or ceilings.copy_GBps
        times.append(work["bytes"] / bandwidth / 1e6)  # GB/s = 1e6 bytes per ms
    if "flops" in work:
        precision = scoring.precision(env)
        peak = ceilings.peak(precision)
        if not peak:
            raise SpecError(
                f"--times model: {device} has no stored {precision} peak for {spec.name}'s "
                "flops; use --times store or measured"
            )
        times.append(work["flops"] / peak / 1e6)
    return max(times)


def model_ms(
    spec: KernelSpec,
    problem: Problem,
    device: DeviceInfo,
    config: Config,
    store: Store,
    kernel_arg: str | None = None,
) -> float:
    """``roofline_ms`` against ``device``'s stored ceilings."""
    check_work(spec)  # the kernel's own refusal first: measuring ceilings would not help
    ceilings = stored_ceilings(store).get(device.fingerprint)
    if ceilings is None:
        raise SpecError(
            f"--times model: no ceilings stored for {device.id}; measure them once with "
            f"'perfport roofline --device {device.id} --db {shlex.quote(store.path)}'"
        )
    return roofline_ms(spec, problem, config, ceilings, device.id)


def given_times(
    source: TimeSource,
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    store: Store | None,
    times: Mapping[str, float] | None = None,
    kernel_arg: str | None = None,
) -> tuple[float, ...] | None:
    """Each device's time for the plan from ``source``, in device order; None for
    ``measured`` (the caller runs each device alone). ``times``: the caller's, by device
    id (``given``), one for every device. ``kernel_arg``: as ``stored_ms`` takes it."""
    if source is TimeSource.MEASURED:
        return None
    if source is TimeSource.GIVEN:
        missing = [d.id for d in devices if d.id not in (times or {})]
        if times is None or missing:
            raise SpecError(f"given times: none for {', '.join(missing)}; give every device's")
        extra = sorted(set(times) - {d.id for d in devices})
        if extra:  # a misspelt id would otherwise be ignored silently
            raise SpecError(f"given times: {', '.join(map(str, extra))} is not a device of the "
                            "split; give one time per device of the split, by its id")  # fmt: skip
        got = tuple(float(times[d.id]) for d in devices)
    elif store is None:
        raise SpecError(f"--times {source.value} reads the results database; give --db")
    else:
        read = stored_ms if source is TimeSource.STORE else model_ms
        got = tuple(
            read(spec, problem, d, c, store, kernel_arg)
            for d, c in zip(devices, configs, strict=True)
        )
    # Refused before the fastest device runs alone (the plan would refuse them after it).
    bad = [(d.id, t) for d, t in zip(devices, got, strict=True) if not (math.isfinite(t) and t > 0)]
    if bad:
        what = "given" if source is TimeSource.GIVEN else f"--times {source.value}"
        raise SpecError(f"{what}: {bad[0][0]}'s time is {bad[0][1]} ms; a device's time must be "
                        "positive and finite")  # fmt: skip
    return got
