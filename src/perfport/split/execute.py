"""Running one NDRange across devices: a queue per device, the host cutting the inputs
(halos included) and gathering the outputs, every part enqueued with its own configuration
(``Session.start_launch``), then each waited for.

Each part is the kernel on a smaller problem (see ``perfport._core.splitting``), so any kernel
that declares its split runs unchanged: no offsets. CPU devices of one OpenCL context share
one parent buffer per array through sub-buffers (``perfport.split.subbuffers``); other parts
get copies of their own, each device in its own context.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from perfport._core import (
    ArrayArg,
    BuildError,
    Config,
    DeviceInfo,
    Expr,
    KernelSpec,
    LaunchError,
    LocalArg,
    PerfportError,
    Problem,
    ScalarArg,
    SpecError,
    SplitArray,
    SplitDim,
)
from perfport._core.errors import first_line
from perfport.devices import CompiledKernel, ConstantData, LocalSpace, Session, open_session
from perfport.measure.data import host_arrays, scalar_value
from perfport.split.legal import check_parts, halo
from perfport.split.subbuffers import Buffers, GroupOpener, Opener, open_parts, share

SEED = 0  # the inputs' seed: a split's numpy reference is computed from the same data


@dataclass(frozen=True)
class Part:
    """One device's share: elements [start, stop) of the split's extent, and its configuration."""

    device: DeviceInfo
    config: Config
    start: int
    stop: int


class PartFailed(PerfportError):
    """A part's kernel did not build, or its launch failed, on its device: what the driver
    said, in one line. Not bad input (``perfport split`` exits 1, as ``perfport tune`` does
    when nothing ran)."""


@contextmanager
def on_device(device: DeviceInfo, spec: KernelSpec, what: str) -> Iterator[None]:
    """Turn a BuildError or LaunchError inside into a PartFailed naming ``device`` and the
    driver's first line (a split has no outcome to record it as, as a tuning run does)."""
    try:
        yield
    except (BuildError, LaunchError) as exc:
        raise PartFailed(
            f"{spec.name} {what} on {device.id}: {first_line(exc)}; run it on that device "
            "alone ('perfport tune') to see the whole log"
        ) from None


@dataclass(frozen=True)
class RunResult:
    """What one split (or single-device) run measured. ``wall_ms`` is the median, over rounds,
    of the time from handing every part its launch to the last part's queue finishing;
    ``kernel_ms`` each part's median device-event time; ``split_ms`` the host's cutting,
    uploading and building, ``gather_ms`` downloading and assembling the outputs (those of
    the first launch, from the seeded data); ``buffers`` whether the parts shared sub-buffers of one parent per array or copied."""

    wall_ms: float
    kernel_ms: tuple[float, ...]
    rounds: int
    split_ms: float
    gather_ms: float
    outputs: dict[str, np.ndarray] = field(compare=False, repr=False)
    buffers: Buffers = field(default_factory=Buffers, compare=False)


def _shape(exprs: Sequence[str], env: Mapping[str, Any], what: str) -> tuple[int, ...]:
    return tuple(int(Expr(e, what).value(env)) for e in exprs)


def _along(axis: int, ndim: int, start: int, stop: int) -> tuple[slice, ...]:
    index = [slice(None)] * ndim
    index[axis] = slice(start, stop)
    return tuple(index)


class PartRun:
    """One part on a session (OpenCL or CUDA, any ``Session``): its kernel built for the
    part's problem; ``load`` cuts the host inputs and uploads them, or a time-stepping run
    fills ``buffers`` from the devices (``perfport.split.steps``)."""

    def __init__(
        self,
        spec: KernelSpec,
        problem: Problem,
        split: SplitDim | None,
        part: Part,
        session: Session,
        owns_session: bool = True,
        built: dict[tuple[tuple[str, str], ...], CompiledKernel] | None = None,
    ) -> None:
        self.spec, self.part, self.split = spec, part, split
        self.session, self.owns_session = session, owns_session
        self.full_env = spec.env(part.config, problem)
        extent = int(problem[split.extent]) if split else part.stop
        self.lo, self.hi = (
            halo(self.full_env, split, part.start, part.stop, extent) if split else (0, 0)
        )
        size = part.stop - part.start + self.lo + self.hi
        sub = problem.merged({split.extent: size}) if split else problem
        self.env = spec.env(part.config, sub)
        self.geometry = spec.geometry(self.env)
        self.cut = {a.name: a for a in split.arrays} if split else {}
        defines = spec.build_defines(self.env)
        key = tuple(sorted(defines.items()))
        if built is not None and key in built:  # a re-split whose build is unchanged
            self.kernel = built[key]
        else:
            with on_device(part.device, spec, "did not build"):
                self.kernel = session.compile(
                    spec.source, spec.language, spec.entry, defines, spec.include_dirs
                )
            if built is not None:
                built[key] = self.kernel
        self.host: dict[str, np.ndarray] = {}
        self.buffers: dict[str, Any] = {}
        self.args: list[Any] = []

    @property
    def held(self) -> tuple[int, int]:
        """The elements of the extent this part's buffers hold: its own and its halo."""
        return self.part.start - self.lo, self.part.stop + self.hi

    def load(self, inputs: Mapping[str, np.ndarray]) -> None:
        """Cut the host arrays to this part (halos included) and upload them."""
        for a in self.spec.args:
            if isinstance(a, ArrayArg):
                self.host[a.name] = (
                    self._cut(a, inputs[a.name]) if a.name in self.cut else inputs[a.name]
                )
        self.buffers = {n: self.session.upload(arr) for n, arr in self.host.items()}
        self.bind()

    def bind(self) -> None:
        """(Re)build the launch arguments from ``buffers`` (after a swap or a move)."""
        self.args = [self._argument(a) for a in self.spec.args]

    def _views(self, a: ArrayArg) -> tuple[SplitArray, int, tuple[int, ...], tuple[int, ...]]:
        sa = self.cut[a.name]
        view = sa.view or a.shape
        axis = int(Expr(sa.axis, f"split axis of {a.name}").value(self.full_env))
        full = _shape(view, self.full_env, f"split view of {a.name}")
        mine = _shape(view, self.env, f"split view of {a.name}")
        if not 0 <= axis < len(full):
            raise SpecError(
                f"kernel {self.spec.name}: split axis {axis} of {a.name} is not in {full}"
            )
        return sa, axis, full, mine

    def span(self, a: ArrayArg) -> tuple[int, int] | None:
        """Where this part's piece of ``a`` (halo included) lies in the whole array, as (first
        element, elements), where it is one run: cut along its view's outermost axis. None
        otherwise, or where the piece is not the part's shape (``piece`` then says why)."""
        _, axis, full, mine = self._views(a)
        row = prod(full[axis + 1 :])
        first, count = (self.part.start - self.lo) * row, mine[axis] * row
        if prod(full[:axis]) != 1 or count != self.own_count(a) or first + count > prod(full):
            return None
        return first, count

    def own_count(self, a: ArrayArg) -> int:
        """Elements of ``a`` on this part's problem."""
        return prod(_shape(a.shape, self.env, f"argument {a.name} shape"))

    def piece(self, a: ArrayArg, array: np.ndarray) -> np.ndarray:
        """This part's piece of the host array ``a`` (halo included), in its own shape."""
        return self._cut(a, array)

    def _cut(self, a: ArrayArg, array: np.ndarray) -> np.ndarray:
        _, axis, full, mine = self._views(a)
        start = self.part.start - self.lo
        piece = array.reshape(full)[_along(axis, len(full), start, start + mine[axis])]
        own = _shape(a.shape, self.env, f"argument {a.name} shape")
        if piece.size != int(np.prod(own)):
            raise SpecError(
                f"kernel {self.spec.name}: the split of {a.name} gives {piece.shape}, "
                f"its shape on the part's problem is {own}; fix the spec's split view"
            )
        return np.ascontiguousarray(piece).reshape(own)

    def _argument(self, a: Any) -> Any:
        if isinstance(a, ArrayArg):
            buffer = self.buffers[a.name]
            return ConstantData(a.name, buffer) if a.constant else buffer
        if isinstance(a, ScalarArg):
            return scalar_value(self.spec, a, self.env)
        assert isinstance(a, LocalArg)
        return LocalSpace(self.spec.local_arg_bytes(self.env)[a.name])

    def launch(self) -> float:
        g = self.geometry
        with on_device(self.part.device, self.spec, "failed to launch"):
            return self.session.launch(self.kernel, g.global_size, g.local_size, self.args, 1)[0]

    def start(self) -> Any:
        """Enqueue this part's launch without waiting (``finish`` waits)."""
        g = self.geometry
        with on_device(self.part.device, self.spec, "failed to launch"):
            return self.session.start_launch(self.kernel, g.global_size, g.local_size, self.args)

    def finish(self, pending: Any) -> float:
        with on_device(self.part.device, self.spec, "failed"):
            return self.session.finish_launch(pending)

    def gather(self, outputs: dict[str, np.ndarray]) -> None:
        """Download this part's outputs and write its own range into the whole ones."""
        for name in outputs:
            mine = np.empty_like(self.host[name])
            self.session.download(self.buffers[name], mine)
            self.place(name, mine, outputs)

    def place(self, name: str, mine: np.ndarray, outputs: dict[str, np.ndarray]) -> None:
        """Write this part's own range of its output ``name`` (``mine``, as its buffer holds
        it, halo included) into the whole one."""
        whole = outputs[name]
        if name not in self.cut:
            whole[...] = mine.reshape(whole.shape)
            return
        arg = next(a for a in self.spec.args if isinstance(a, ArrayArg) and a.name == name)
        _, axis, full, view = self._views(arg)
        own = self.part.stop - self.part.start
        piece = mine.reshape(view)[_along(axis, len(view), self.lo, self.lo + own)]
        whole.reshape(full)[_along(axis, len(full), self.part.start, self.part.stop)] = piece

    def close(self) -> None:
        if self.owns_session:
            self.session.close()


def launch_all(runs: Sequence[PartRun]) -> tuple[float, list[float]]:
    """Enqueue every part, then wait for each: (wall ms, each part's device ms). No thread
    per part: the GPU run lost ~0.17 ms a launch to a thread pool's hand-offs."""
    started = time.perf_counter()
    pending = [r.start() for r in runs]
    times = [r.finish(p) for r, p in zip(runs, pending, strict=True)]
    return (time.perf_counter() - started) * 1e3, times


def check_outputs_cut(spec: KernelSpec, split: SplitDim) -> None:
    """Raise SpecError when an output array is not cut: the parts could not gather it."""
    outputs = {a.name for a in spec.args if isinstance(a, ArrayArg) and a.output}
    uncut = sorted(outputs - {a.name for a in split.arrays})
    if uncut:
        raise SpecError(
            f"kernel {spec.name}: its split along {split.dimension} does not cut the "
            f"output(s) {uncut}; name them in the split's arrays"
        )


def open_part(
    spec: KernelSpec,
    problem: Problem,
    split: SplitDim | None,
    part: Part,
    session: Session,
    owns_session: bool,
    built: dict[tuple[tuple[str, str], ...], CompiledKernel] | None = None,
) -> PartRun:
    """A part's run on ``session``; a session it owns is closed if the build fails.
    ``built`` caches the session's kernels by their defines (the same session only)."""
    try:
        return PartRun(spec, problem, split, part, session, owns_session, built)
    except BaseException:
        if owns_session:
            session.close()
        raise


def run_parts(
    spec: KernelSpec,
    problem: Problem,
    parts: Sequence[Part],
    split: SplitDim | None,
    seed: int = SEED,
    target_s: float = 0.2,
    opener: Opener = open_session,
    group: GroupOpener | None = None,
) -> RunResult:
    """Run ``parts`` (one per device; a single part with ``split`` None is a whole run)
    concurrently, round after round for about ``target_s`` (3 to 50 rounds after one
    warm-up), and return the times and the outputs gathered after the warm-up: the one launch
    from the seeded data, whatever the later rounds leave in the buffers. ``opener`` opens each part's
    session (default: OpenCL or CUDA by the device's backend, so runs may mix them);
    ``group`` opens the sessions of parts that may share buffers (CPU devices of one OpenCL
    platform) together, in one context, so they share sub-buffers (``RunResult.buffers``);
    with the default ``opener`` it defaults to ``open_sessions``."""
    full = spec.problem.merged(problem)
    inputs = host_arrays(spec, spec.env({}, full), seed)
    outputs = {
        a.name: inputs[a.name].copy()  # uncovered elements keep their seeded random values
        for a in spec.args
        if isinstance(a, ArrayArg) and a.output
    }
    if split is not None:
        check_outputs_cut(spec, split)
    check_parts(spec, full, split, parts)  # before any session opens: no launch refused
    started = time.perf_counter()
    live = [p for p in parts if p.stop > p.start]
    sessions, why = open_parts([p.device for p in live], opener, group, split is not None)
    try:
        runs = [
            open_part(spec, full, split, p, s, False) for p, s in zip(live, sessions, strict=True)
        ]
        shared, buffers = share(runs, inputs, why)
        if shared is None:
            for r in runs:
                r.load(inputs)
        split_ms = (time.perf_counter() - started) * 1e3

        def gather() -> float:
            started = time.perf_counter()
            if shared is not None:  # one download of each output's parent
                shared.gather(outputs)
            else:
                for r in runs:
                    r.gather(outputs)
            return (time.perf_counter() - started) * 1e3

        walls, kernels, gather_ms = _rounds(runs, target_s, gather)
    finally:
        for s in sessions:
            s.close()
    return RunResult(
        wall_ms=statistics.median(walls),
        kernel_ms=tuple(statistics.median(k) for k in kernels),
        rounds=len(walls),
        split_ms=split_ms,
        gather_ms=gather_ms,
        outputs=outputs,
        buffers=buffers,
    )


def _rounds(
    runs: Sequence[PartRun], target_s: float, gather: Callable[[], float]
) -> tuple[list[float], list[list[float]], float]:
    """The timed rounds' wall and kernel times, and ``gather``'s time (ms). The outputs are
    gathered after round 0, the one launch from the seeded data: later rounds run on what the
    one before left, so an in-place kernel (acc[i] += ...) would show several launches' sum."""
    walls: list[float] = []
    kernels: list[list[float]] = [[] for _ in runs]
    gather_ms = 0.0
    for r in range(51):  # round 0 warms up (first launches, caches) and is not counted
        wall, times = launch_all(runs)
        if r == 0:
            gather_ms = gather()
            continue
        walls.append(wall)
        for k, t in zip(kernels, times, strict=True):
            k.append(t)
        if len(walls) >= 3 and sum(walls) >= target_s * 1e3:
            break
    return walls, kernels, gather_ms
