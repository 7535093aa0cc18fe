"""Measuring loopy kernels through perfport's measurement layer: a loopy program becomes a
``KernelSpec`` (loopy's OpenCL source, its arguments, its NDRange as expressions of the sizes),
measured by ``perfport.tune`` in a worker process and stored as an ordinary result. A
collection run is resumable: a kernel already measured on the device is not run again; one
that fails to generate, build or run is an outcome, and the run goes on.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.errors import ExpressionError
from perfport._core.expr import Expr
from perfport._core.records import DeviceInfo, Problem
from perfport._core.spec import ArrayArg, KernelSpec, ScalarArg
from perfport.measure.settings import RunSettings
from perfport.model.collection import Generator
from perfport.model.errors import ModelError
from perfport.model.gather import assumptions_text, loopy
from perfport.store import CampaignStatus, Store
from perfport.store.queries import export_rows
from perfport.tune import tune


class CollectStatus(Enum):
    MEASURED = "measured"  # measured in this run
    STORED = "stored"  # measured before, or by another run meanwhile: taken from the store
    FAILED = "failed"  # failed to generate, build or run: see the message


@dataclass(frozen=True)
class CollectResult:
    """One measurement kernel of a collection run."""

    generator: str
    args: Problem
    status: CollectStatus
    time_ms: float | None
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "generator": self.generator,
            "args": dict(self.args),
            "status": self.status.value,
            "time_ms": self.time_ms,
            "message": self.message,
        }


def kernel_spec(program: Any, name: str, problem: Problem) -> KernelSpec:
    """The KernelSpec of a loopy program (one entrypoint), its sizes given by ``problem``."""
    lp = loopy()
    if isinstance(program, lp.LoopKernel):
        program = lp.make_program(program)
    from loopy.preprocess import infer_unknown_types

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loopy's notes on counts and schedules
        # The NDRange of the code generated: a reduction over a local iname (l.0) becomes
        # a work-group-wide reduction only in preprocessing, so the kernel as written has
        # a work-group of 1 where the code requires the iname's extent.
        done = lp.preprocess_program(program)
        # What generate_code_v2 would do itself, kept to read which arguments it passes.
        linear = lp.linearize(infer_unknown_types(done, expect_completion=True))
        code = lp.generate_code_v2(linear)
    knl = program.default_entrypoint
    groups, local = done.default_entrypoint.get_grid_size_upper_bounds_as_exprs(
        done.callables_table
    )
    args: list[ArrayArg | ScalarArg] = []
    written = knl.get_written_variables()
    for a in _passed_args(knl, linear.default_entrypoint):
        # loopy leaves the type of a size it inferred open; its OpenCL code makes it int
        dtype = a.dtype.numpy_dtype.name if a.dtype is not None else "int32"
        if isinstance(a, lp.ValueArg):
            # An integer scalar is a size the problem gives; any other (a saxpy's a) is data,
            # whose value a kernel's time does not depend on: 1.
            integer = np.dtype(dtype).kind in "iu"
            args.append(ScalarArg(a.name, dtype, a.name if integer else "1"))
        else:
            shape = tuple(str(s) for s in a.shape)
            args.append(ArrayArg(a.name, dtype, shape, output=a.name in written))
    # An axis loopy leaves out has extent 1 (2-D work-groups in one row of groups).
    dims = max(len(groups), len(local))
    groups = (*groups, *(1,) * (dims - len(groups)))
    local = (*local, *(1,) * (dims - len(local)))
    global_size = tuple(f"({g}) * {w}" for g, w in zip(groups, local, strict=True))
    return KernelSpec(
        name=name,
        source=code.device_code(),
        entry=knl.name,
        global_size=global_size or ("1",),
        local_size=tuple(str(x) for x in local) or ("1",),
        args=tuple(args),
        problem=problem,
        doc=f"loopy kernel {knl.name}",
    )


def _passed_args(knl: Any, linear: Any) -> list[Any]:
    """The arguments the generated entry takes, in its order: loopy leaves out a value
    argument its code never reads (a size only an array's shape names)."""
    from loopy.schedule.tools import get_subkernel_arg_info

    try:
        passed = get_subkernel_arg_info(linear, knl.name).passed_arg_names
    except Exception:  # no subkernel of the entry's name (global barriers split it): all
        return list(knl.args)
    by_name = {a.name: a for a in knl.args}
    return [by_name[n] for n in passed if n in by_name]


def _stored(db: str | Path, device: DeviceInfo) -> dict[tuple[str, str, str], float]:
    """(kernel, problem key, source hash) -> median ms of what ``db`` holds for ``device``."""
    # Opened (made, if new) before anything is measured: a --db that cannot be a results
    # database is one error now, not a failure per kernel.
    with Store(db) as store:
        return {
            (r.kernel, r.problem.key, r.kernel_hash): r.median_ms
            for r in export_rows(store, device=device.fingerprint)
            if r.median_ms is not None
        }


def collect(
    variants: Sequence[tuple[Generator, Problem]],
    device: DeviceInfo,
    db: str | Path,
    settings: RunSettings | None = None,
    on_result: Callable[[CollectResult], None] | None = None,
) -> list[CollectResult]:
    """Measure each (generator, arguments) on ``device`` into ``db``, skipping those stored."""
    settings = settings or RunSettings(verify=False)  # microbenchmarks compute no reference
    # A generator is perfport's own code: its stored results stand without building each
    # kernel again to hash it (that would cost a resumed collection loopy's time per kernel).
    done = {(kernel, key): ms for (kernel, key, _), ms in _stored(db, device).items()}
    results = []
    for generator, args in variants:
        name = f"mk-{generator.name}"
        if (name, args.key) in done:
            result = CollectResult(generator.name, args, CollectStatus.STORED, done[name, args.key])
        else:
            result = _measure_one(generator, args, name, device, db, settings)
        results.append(result)
        if on_result:
            on_result(result)
    return results


def _measure_one(
    generator: Generator,
    args: Problem,
    name: str,
    device: DeviceInfo,
    db: str | Path,
    settings: RunSettings,
) -> CollectResult:
    def make() -> KernelSpec:
        program = generator.kernel(args).program
        _check_assumptions(program, args)
        return kernel_spec(program, name, args)

    return _measure_spec(make, generator.name, args, device, db, settings)


def _check_assumptions(program: Any, args: Problem) -> None:
    """Refuse sizes outside the kernel's assumptions in words: they used to launch as a
    global size of 0 (nel:100 under a work-group of 256)."""
    knl = program if isinstance(program, loopy().LoopKernel) else program.default_entrypoint
    text = assumptions_text(knl)
    try:
        holds = Expr(text, f"assumptions of {knl.name}").value(dict(args))
    except ExpressionError:  # a size it names is not in args: the launch says what is wrong
        return
    if not holds:
        raise ModelError(f"sizes outside the kernel's assumptions {text}; give sizes that "
                         "satisfy them (nel a multiple of the work-group size lsize_0, and at "
                         "least it)")  # fmt: skip


def _measure_spec(
    make_spec: Callable[[], KernelSpec],
    label: str,
    args: Problem,
    device: DeviceInfo,
    db: str | Path,
    settings: RunSettings,
) -> CollectResult:
    try:
        spec = make_spec()
        run = tune(spec, problem=dict(args), device=device, db=db, budget=1, settings=settings)
    except ModelError as exc:  # ours: one line that says what to change
        return CollectResult(label, args, CollectStatus.FAILED, None, str(exc))
    except Exception as exc:  # loopy or a device: a bad kernel is an outcome, never a stop
        lines = str(exc).strip().splitlines() or [""]
        message = f"{type(exc).__name__}: {lines[-1]}"
        return CollectResult(label, args, CollectStatus.FAILED, None, message)
    if run.status is CampaignStatus.INTERRUPTED:
        # Ctrl-C (or SIGTERM) stops the whole run, not this kernel: what is stored resumes.
        raise KeyboardInterrupt
    (m,) = run.measurements or (None,)
    if m is None or not m.ok:
        why = f"{m.outcome.value}: {m.message}" if m else "no trial ran"
        return CollectResult(label, args, CollectStatus.FAILED, None, why)
    # Another collection of the same store may have measured it meanwhile (tune's claims
    # keep it from being measured twice): then it is taken from the store, as one found before.
    done = CollectStatus.MEASURED if run.measured_here else CollectStatus.STORED
    return CollectResult(label, args, done, m.time_ms)


def measure_application(
    program: Any,
    name: str,
    sizes: Sequence[Problem],
    device: DeviceInfo,
    db: str | Path,
    settings: RunSettings | None = None,
    on_result: Callable[[CollectResult], None] | None = None,
) -> list[CollectResult]:
    """Measure an application kernel (stored as ``app-<name>``) at each of ``sizes`` through
    the same bridge as the collection, skipping sizes already stored for the device. Outputs
    are not verified here: the built-in kernels are checked against numpy by the tests."""
    settings = settings or RunSettings(verify=False)
    kernel = f"app-{name}"
    done = _stored(db, device)
    results = []
    for problem in sizes:
        make = functools.partial(kernel_spec, program, kernel, problem)
        try:
            # Stored results count only where they ran this code: an edited file is measured
            # again (the source hash names the code).
            key: tuple[str, str, str] | None = (kernel, problem.key, make().source_hash)
        except Exception:  # _measure_spec makes it again and reports why it fails
            key = None
        if key in done:
            result = CollectResult(name, problem, CollectStatus.STORED, done[key])
        else:
            result = _measure_spec(make, name, problem, device, db, settings)
        results.append(result)
        if on_result:
            on_result(result)
    return results
