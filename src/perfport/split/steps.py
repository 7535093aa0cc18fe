"""Time-stepping across devices: a kernel whose output feeds its next step's input (a
stencil's iterations) runs N steps with each part's data kept on its device. Between steps
only the halo moves: each part's stale halo rows are downloaded from the neighbours that
own them and uploaded into its buffer. When a ``Replan`` changes the split, the rows that
change owner move between devices and the rest stay (a copy on the device).

Parts on CPU devices of one OpenCL context, along a split with no halo, share one parent
per array instead (``perfport.split.stepshare``): nothing moves between steps or on a
re-split; ``StepsResult.buffers`` says which way a run went, and why it copied.

Semantics, the same on one device and on several: step k launches the kernel on the
buffers as they are; then every (output, input) pair of the split's ``feeds`` swaps
buffers (ping-pong), so unwritten elements behave as on one device. No swap follows the
last step; the gathered outputs are the last step's.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Any

import numpy as np

from perfport._core import ArrayArg, KernelSpec, Problem, SpecError, SplitDim
from perfport.devices import CompiledKernel, Session, open_session
from perfport.measure.data import host_arrays
from perfport.split.execute import (
    GroupOpener,
    Opener,
    Part,
    PartRun,
    check_outputs_cut,
    launch_all,
    open_part,
)
from perfport.split.halo import (
    Range,
    Slab,
    Transfer,
    check_feeds,
    halo_ranges,
    row_shape,
    transfers,
)
from perfport.split.legal import check_parts
from perfport.split.stepshare import SharedSteps, share_steps
from perfport.split.subbuffers import Buffers


@dataclass(frozen=True)
class Step:
    """One step: the parts it ran (one range per device, empty where it ran nothing), the
    wall time of its launches and each device's kernel time (0 where it ran nothing), the
    halo exchange after it and the rows moved before it by a re-split."""

    parts: tuple[Range, ...]
    step_ms: float
    kernel_ms: tuple[float, ...]
    exchange_ms: float = 0.0
    exchange_bytes: int = 0
    moved_ms: float = 0.0
    moved_bytes: int = 0
    exchange_device_bytes: int = 0  # of exchange_bytes, copied device to device

    @property
    def total_ms(self) -> float:
        return self.step_ms + self.exchange_ms + self.moved_ms

    def to_json(self) -> dict[str, Any]:
        return {
            "parts": [list(p) for p in self.parts],
            "step_ms": self.step_ms,
            "part_kernel_ms": list(self.kernel_ms),
            "exchange_ms": self.exchange_ms,
            "exchange_bytes": self.exchange_bytes,
            "moved_ms": self.moved_ms,
            "moved_bytes": self.moved_bytes,
            "exchange_device_bytes": self.exchange_device_bytes,
        }


@dataclass(frozen=True)
class StepsResult:
    """A time-stepping run: its steps, the host's setup (cutting, uploading, building) and
    gathering times, the gathered outputs of the last step, and whether the parts shared
    sub-buffers of one parent per array or kept copies (``buffers``)."""

    steps: tuple[Step, ...]
    setup_ms: float
    gather_ms: float
    outputs: dict[str, np.ndarray] = field(compare=False, repr=False)
    buffers: Buffers = field(default_factory=Buffers, compare=False)

    @property
    def total_ms(self) -> float:
        """Every step with its exchange and moves (setup and gathering apart)."""
        return sum(s.total_ms for s in self.steps)

    @property
    def step_ms(self) -> float:
        """The median step's launches (the first step's warm-up weighs no more than one)."""
        return statistics.median(s.step_ms for s in self.steps)

    @property
    def exchange_ms(self) -> float:
        """The median halo exchange between two steps (0 with one step)."""
        between = [s.exchange_ms for s in self.steps[:-1]]
        return statistics.median(between) if between else 0.0

    @property
    def halo_path(self) -> HaloPath:
        """How the halo rows went between devices: all device to device, all through the
        host, some of each, or none moved (one part)."""
        moved = sum(s.exchange_bytes for s in self.steps)
        direct = sum(s.exchange_device_bytes for s in self.steps)
        if not moved:
            return HaloPath.NONE
        return (
            HaloPath.DEVICE if direct == moved else HaloPath.HOST if not direct else HaloPath.MIXED
        )


class HaloPath(Enum):
    """The route of a time-stepping run's halo exchange between devices."""

    DEVICE = "device"  # one OpenCL context over the devices, or CUDA peer copies
    HOST = "host"  # read to the host, written to the neighbour
    MIXED = "mixed"
    NONE = "none"


# Called before every step after the first with the steps so far; returns the next step's
# parts (one range per device, together the whole extent) or None to keep them.
Replan = Callable[[Sequence[Step]], Sequence[Range] | None]


def _call_all(calls: Sequence[Callable[[], object]]) -> None:
    for call in calls:
        call()


class _Stepper:
    """The parts of a time-stepping run, one session per device for the whole run."""

    def __init__(
        self,
        spec: KernelSpec,
        problem: Problem,
        parts: Sequence[Part],
        split: SplitDim,
        opener: GroupOpener,
        inputs: Mapping[str, np.ndarray],
        device_halos: bool = True,
        resplits: bool = False,
        alone: str | None = None,
    ) -> None:
        """``resplits``: whether a ``Replan`` may move the parts; ``alone``: why the sessions
        cannot share buffers whatever their devices (None: ``share_steps`` decides)."""
        self.spec, self.problem, self.split, self.inputs = spec, problem, split, inputs
        self.device_halos = device_halos  # False: every move between devices via the host
        self.parts = list(parts)
        self.sessions: list[Session] = []
        # per device: its kernels by defines, so a re-split builds only what changed
        self.built: list[dict[tuple[tuple[str, str], ...], CompiledKernel]] = []
        self.runs: dict[int, PartRun] = {}
        self.pool = ThreadPoolExecutor(max_workers=len(parts))  # a halo exchange's devices
        # host staging of the halo exchange by (array, source, target, start, stop)
        self.staging: dict[tuple[str, int, int, int, int], np.ndarray] = {}
        self.sessions = opener([p.device for p in parts])
        self.shared: SharedSteps | None = None
        try:
            self.shared, self.buffers = share_steps(
                spec, problem, parts, split, self.sessions, inputs, resplits, alone
            )
            for i, p in enumerate(parts):
                self.built.append({})
                if p.stop > p.start:
                    self.runs[i] = open_part(
                        spec, problem, split, p, self.sessions[i], False, self.built[i]
                    )
                    self._fill(self.runs[i])
        except BaseException:
            self.close()
            raise

    def _fill(self, run: PartRun) -> None:
        """A new part's buffers: its rows of the shared parents, else its own copies."""
        if self.shared is not None:
            self.shared.attach(run)
        else:
            run.load(self.inputs)

    @property
    def bounds(self) -> tuple[Range, ...]:
        return tuple((p.start, p.stop) for p in self.parts)

    def slab(self, i: int, name: str) -> Slab:
        run = self.runs[i]
        itemsize = self.inputs[name].dtype.itemsize
        return Slab(run.held[0], row_shape(self.spec, self.split, name, run.env) * itemsize)

    def launch(self) -> tuple[float, tuple[float, ...]]:
        wall, got = launch_all(list(self.runs.values()))
        times = dict(zip(self.runs, got, strict=True))
        return wall, tuple(times.get(i, 0.0) for i in range(len(self.parts)))

    def _transfer(
        self, moves: Sequence[tuple[str, Transfer]], into: Mapping[int, PartRun], keep: bool
    ) -> tuple[int, int]:
        """Copy each (array, transfer) from a part of this run to its target part of
        ``into``: every device's reads at once (one pool task per device), then every
        device's writes; rows a device keeps are copied on it. With ``keep`` the host
        staging buffers are kept for the next call (a halo's ranges recur every step); where
        the target's session can copy from the source's (one context, CUDA peers), the
        bytes go device to device. Returns the bytes moved between devices and, of them,
        those copied device to device."""
        reads: dict[int, list[Callable[[], object]]] = {}
        writes: dict[int, list[Callable[[], object]]] = {}
        moved = direct = 0
        for name, t in moves:
            src, dst = self.runs[t.source], into[t.target]
            slab = self.slab(t.source, name)
            offset, nbytes = slab.span(t.start, t.stop)
            dst_offset = Slab(dst.held[0], slab.row_bytes).span(t.start, t.stop)[0]
            if src.session is dst.session:  # rows a device keeps stay on it
                copy = partial(src.session.copy_range, src.buffers[name], offset,
                               dst.buffers[name], dst_offset, nbytes)  # fmt: skip
                writes.setdefault(t.target, []).append(copy)
                continue
            moved += nbytes
            if self.device_halos and dst.session.can_copy_from(src.session):
                peer = partial(dst.session.copy_from, src.session, src.buffers[name], offset,
                               dst.buffers[name], dst_offset, nbytes)  # fmt: skip
                writes.setdefault(t.target, []).append(peer)
                direct += nbytes
                continue
            key = (name, t.source, t.target, t.start, t.stop)
            staging = self.staging.get(key) if keep else None
            if staging is None:
                staging = np.empty(nbytes, np.uint8)
                if keep:
                    self.staging[key] = staging
            reads.setdefault(t.source, []).append(
                partial(src.session.read_range, src.buffers[name], offset, staging)
            )
            writes.setdefault(t.target, []).append(
                partial(dst.session.write_range, dst.buffers[name], dst_offset, staging)
            )
        self._each(reads)
        self._each(writes)
        return moved, direct

    def _each(self, groups: Mapping[int, Sequence[Callable[[], object]]]) -> None:
        """Every device's calls in order, the devices side by side: the first device's in
        this thread, the others' in the pool (one hop fewer)."""
        calls = list(groups.values())
        futures = [self.pool.submit(_call_all, c) for c in calls[1:]]
        if calls:
            _call_all(calls[0])
        for f in futures:
            f.result()

    def swap_and_exchange(self) -> tuple[float, int, int]:
        """Swap every feeds pair's buffers, then refresh each part's halo of the arrays fed
        from its neighbours' own rows. Returns (ms, bytes between devices, of them bytes
        device to device)."""
        started = time.perf_counter()
        if self.shared is not None:  # the neighbours wrote the halo into the parent: no copy
            self.shared.swap(self.split.feeds, list(self.runs.values()))
            return (time.perf_counter() - started) * 1e3, 0, 0
        for r in self.runs.values():
            for out, into in self.split.feeds:
                r.buffers[out], r.buffers[into] = r.buffers[into], r.buffers[out]
            r.bind()
        wanted = [
            halo_ranges((p.start, p.stop), self.runs[i].held) if i in self.runs else ()
            for i, p in enumerate(self.parts)
        ]
        moves = [(into, t) for t in transfers(self.bounds, wanted) for _, into in self.split.feeds]
        moved, direct = self._transfer(moves, self.runs, keep=True)
        return (time.perf_counter() - started) * 1e3, moved, direct

    def move(self, bounds: Sequence[Range]) -> tuple[float, int]:
        """Re-split: every device's new part (its kernel built for the new size) filled with
        its held rows from their old owners. Returns (ms, bytes between devices)."""
        started = time.perf_counter()
        parts = [
            Part(p.device, p.config, a, b) for p, (a, b) in zip(self.parts, bounds, strict=True)
        ]
        check_parts(self.spec, self.problem, self.split, parts)  # before any part changes
        new: dict[int, PartRun] = {}
        for i, p in enumerate(parts):
            if p.stop > p.start:
                new[i] = open_part(
                    self.spec, self.problem, self.split, p, self.sessions[i], False, self.built[i]
                )
                if self.shared is None:
                    self._allocate(i, new[i])
        if self.shared is not None:  # the rows stay where they are in the parents
            self.shared.moved(list(new.values()))
            self.runs, self.parts = new, parts
            return (time.perf_counter() - started) * 1e3, 0
        wanted = [[new[i].held] if i in new else [] for i in range(len(parts))]
        moves = [(c.name, t) for t in transfers(self.bounds, wanted) for c in self.split.arrays]
        moved, _ = self._transfer(moves, new, keep=False)
        self.staging.clear()  # the halo's ranges change with the parts
        for session in self.sessions:  # and so do the boxes that carried the halos and moves
            session.forget_copies()
        for r in new.values():
            r.bind()
        self.runs, self.parts = new, parts
        return (time.perf_counter() - started) * 1e3, moved

    def _allocate(self, i: int, run: PartRun) -> None:
        """Buffers for a new part: cut arrays to be filled by moves, whole arrays kept."""
        for a in self.spec.args:
            if not isinstance(a, ArrayArg):
                continue
            if a.name in run.cut:
                rows = run.held[1] - run.held[0]
                shape = (rows * row_shape(self.spec, self.split, a.name, run.env),)
                run.host[a.name] = np.empty(shape, self.inputs[a.name].dtype)
                run.buffers[a.name] = run.session.upload(run.host[a.name])
            else:
                old = self.runs.get(i)
                run.host[a.name] = self.inputs[a.name]
                run.buffers[a.name] = (
                    old.buffers[a.name] if old else run.session.upload(self.inputs[a.name])
                )

    def gather(self, outputs: dict[str, np.ndarray]) -> None:
        """The last step's outputs: one download of each parent, or each part's own rows."""
        if self.shared is not None:
            self.shared.gather(outputs)
            return
        for r in self.runs.values():
            r.gather(outputs)

    def close(self) -> None:
        self.pool.shutdown()
        for s in self.sessions:
            s.close()


def run_steps(
    spec: KernelSpec,
    problem: Problem,
    parts: Sequence[Part],
    split: SplitDim,
    steps: int,
    replan: Replan | None = None,
    opener: Opener = open_session,
    seed: int = 0,
    group: GroupOpener | None = None,
    device_halos: bool = True,
) -> StepsResult:
    """Run ``steps`` steps of ``spec`` with ``parts`` (one per device; one part over the
    whole extent is the single-device run), exchanging halos between steps and re-splitting
    where ``replan`` says; return the steps and the last step's gathered outputs. Sessions
    open through ``group`` (all at once: e.g. sharing a context, so halos go device to
    device) when given, else one by one through ``opener``. ``device_halos=False`` stages
    every move between devices through the host even where the sessions could copy device
    to device (``--halo host``: CUDA peers copy without a shared context)."""
    if steps < 1:
        raise SpecError(f"--steps {steps}: give 1 or more")
    full = spec.problem.merged(problem)
    check_outputs_cut(spec, split)
    check_feeds(spec, split, spec.env(parts[0].config, full))
    check_parts(spec, full, split, parts)  # before any session opens: no launch refused
    inputs = host_arrays(spec, spec.env({}, full), seed)
    outputs = {
        a.name: inputs[a.name].copy() for a in spec.args if isinstance(a, ArrayArg) and a.output
    }
    started = time.perf_counter()
    open_all = group or (lambda devices: [opener(d) for d in devices])
    alone = None if group else "the sessions were opened one by one (an opener without a group)"
    stepper = _Stepper(spec, full, parts, split, open_all, inputs, device_halos,
                       replan is not None, alone)  # fmt: skip
    try:
        setup_ms = (time.perf_counter() - started) * 1e3
        done: list[Step] = []
        for k in range(steps):
            moved_ms, moved = 0.0, 0
            new = replan(done) if replan is not None and k else None
            if new is not None and tuple(tuple(b) for b in new) != stepper.bounds:
                moved_ms, moved = stepper.move(new)
            wall, kernel_ms = stepper.launch()
            exchange_ms, exchanged, direct = (
                stepper.swap_and_exchange() if k < steps - 1 else (0.0, 0, 0)
            )
            done.append(Step(stepper.bounds, wall, kernel_ms, exchange_ms, exchanged,
                             moved_ms, moved, direct))  # fmt: skip
        started = time.perf_counter()
        stepper.gather(outputs)
        gather_ms = (time.perf_counter() - started) * 1e3
    finally:
        stepper.close()
    return StepsResult(tuple(done), setup_ms, gather_ms, outputs, stepper.buffers)
