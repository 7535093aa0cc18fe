"""Sub-buffers for time-stepping: the parts of a stepped split on CPU devices of one OpenCL
context (PoCL's sub-devices) share one parent per array, the whole array in its own layout,
and each part's argument is a sub-buffer over its rows of it.

Then nothing moves between steps: a part's next input is the parent its neighbours wrote,
row for row where the whole array has it, so there is no halo exchange, and a re-split only
makes new sub-buffers (no row changes owner in memory). The ping-pong swap of a ``feeds``
pair swaps the parents, and each part's sub-buffers with them.

OpenCL leaves undefined a write through one sub-buffer concurrent with any other access
through an overlapping one (or through the parent). Within a step, parts read their input
parent's rows and write their output parent's: the two parents of a feeds pair differ
(ping-pong), and the launches of step k have all finished (``launch_all`` waits for every
part) before step k + 1 or the swap begins. What remains is each part's writes against its
neighbours' accesses of the same parent, and those are disjoint only where **the split has
no halo**: a part's kernel (the kernel on a smaller problem) writes every row it holds, its
halo rows too, and in the whole array's layout those are a neighbour's own rows: two devices
would write the same bytes in one step (and an array read and written in one step would be
read where a neighbour writes). A split with a halo keeps each part's buffers and exchanges
the halo rows between steps (``perfport.split.steps``), with the reason as ``Buffers.why``.
So do the devices and sessions ``perfport.split.subbuffers`` refuses, and a part's rows that
would not start at a multiple of the devices' ``MEM_BASE_ADDR_ALIGN`` (with re-splitting,
any row that does not: a move may start a part on any row).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perfport._core import ArrayArg, Expr, KernelSpec, Problem, SplitDim
from perfport.devices import Session
from perfport.split.execute import Part, PartRun
from perfport.split.halo import row_shape
from perfport.split.subbuffers import (
    COPIES,
    SUB_BUFFERS,
    Buffers,
    device_refusal,
    session_refusal,
)


def row_bytes(
    spec: KernelSpec, split: SplitDim, env: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> dict[str, int]:
    """Bytes per element of the split's extent of each cut array (whole rows: ``row_shape``)."""
    return {
        c.name: row_shape(spec, split, c.name, env) * arrays[c.name].dtype.itemsize
        for c in split.arrays
    }


def halo_refusal(split: SplitDim, env: Mapping[str, Any]) -> str | None:
    """Why parts with the split's halo cannot share a parent: they would write each other's
    rows (see the module's doc); None for a split with no halo."""
    before, after = (int(Expr(h, "split halo").value(env)) for h in split.halo)
    if before or after:
        return (
            f"the split along dimension {split.dimension} has a halo ({before} before, "
            f"{after} after): each part's kernel writes its halo rows too, which in one "
            "parent are a neighbour's own rows, so each part keeps its buffers and the halo "
            "moves between steps"
        )
    return None


def align_refusal(
    parts: Sequence[Part], rows: Mapping[str, int], align: int, resplits: bool
) -> str | None:
    """Why a part's sub-buffer could not start where its rows do: a start off a multiple of
    ``align`` bytes now (``parts``), or with ``resplits`` at any row (a move may pick it)."""
    for name, size in rows.items():
        if resplits and size % align:
            return (
                f"a row of {name} is {size} bytes, not a multiple of the devices' {align}-byte "
                "MEM_BASE_ADDR_ALIGN: a re-split could start a part between two"
            )
        for i, p in enumerate(parts):
            if p.stop > p.start and p.start * size % align:
                return (
                    f"part {i}'s {name} starts at byte {p.start * size}, not a multiple of the "
                    f"devices' {align}-byte MEM_BASE_ADDR_ALIGN"
                )
    return None


def step_refusal(
    spec: KernelSpec,
    problem: Problem,
    parts: Sequence[Part],
    split: SplitDim,
    sessions: Sequence[Session],
    rows: Mapping[str, int],
    resplits: bool,
    alone: str | None = None,
) -> str | None:
    """Why a stepped split's parts keep buffers of their own (``alone``: why the sessions
    cannot share, whatever the devices); None where they may share."""
    why = device_refusal([p.device for p in parts]) or halo_refusal(
        split, spec.env(parts[0].config, problem)
    )
    why = why or alone or session_refusal(sessions)
    if why is None:
        align = math.lcm(*(s.sub_buffer_align() or 1 for s in sessions))
        why = align_refusal(parts, rows, align, resplits)
    return why


class SharedSteps:
    """One parent per array on the first session, the whole array; each part's arguments
    sub-buffers of its rows (cut arrays) or the parent itself (arrays not cut, only read)."""

    def __init__(
        self, session: Session, arrays: Mapping[str, np.ndarray], rows: Mapping[str, int]
    ) -> None:
        self.session, self.rows = session, rows
        self.parents: dict[str, Any] = {n: session.upload(a) for n, a in arrays.items()}
        # by (parent, offset, bytes): after a swap the same regions of the other parent,
        # made in the first two steps and then reused; dropped when a re-split moves them
        self.subs: dict[tuple[int, int, int], Any] = {}

    def attach(self, run: PartRun) -> None:
        """Point ``run``'s arguments at its rows of the parents."""
        first, stop = run.held  # no halo: the part's own rows
        for name, parent in self.parents.items():
            if name not in self.rows:
                run.buffers[name] = parent
                continue
            offset, nbytes = first * self.rows[name], (stop - first) * self.rows[name]
            key = (id(parent), offset, nbytes)
            if key not in self.subs:
                self.subs[key] = run.session.sub_buffer(parent, offset, nbytes)
            run.buffers[name] = self.subs[key]
        run.bind()

    def swap(self, feeds: Sequence[tuple[str, str]], runs: Sequence[PartRun]) -> None:
        """The ping-pong of each feeds pair: swap the parents, then every part's arguments."""
        for out, into in feeds:
            self.parents[out], self.parents[into] = self.parents[into], self.parents[out]
        for r in runs:
            self.attach(r)

    def moved(self, runs: Sequence[PartRun]) -> None:
        """A re-split: the new parts' sub-buffers of the same parents; no row moves."""
        self.subs.clear()
        for r in runs:
            self.attach(r)

    def gather(self, outputs: dict[str, np.ndarray]) -> None:
        """One download of each output's parent: it is the whole array."""
        for name, whole in outputs.items():
            self.session.download(self.parents[name], whole)


def share_steps(
    spec: KernelSpec,
    problem: Problem,
    parts: Sequence[Part],
    split: SplitDim,
    sessions: Sequence[Session],
    arrays: Mapping[str, np.ndarray],
    resplits: bool,
    alone: str | None = None,
) -> tuple[SharedSteps | None, Buffers]:
    """The parents of a stepped split where its devices, sessions, halo and alignment allow
    (``alone``: as ``step_refusal``), else None and the reason (each part then copies)."""
    rows = row_bytes(spec, split, spec.env(parts[0].config, problem), arrays)
    why = step_refusal(spec, problem, parts, split, sessions, rows, resplits, alone)
    if why is not None:
        return None, Buffers(COPIES, why)
    wanted = {a.name for a in spec.args if isinstance(a, ArrayArg)}
    return SharedSteps(sessions[0], {n: arrays[n] for n in wanted}, rows), Buffers(SUB_BUFFERS)
