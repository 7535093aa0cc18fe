"""Sub-buffers where the platform allows: the parts of one split launch on CPU devices of one
OpenCL context (PoCL's sub-devices by fission, a CPU's parts) share one parent buffer per
array instead of a copy each.

- An input is uploaded once, whole; each part's argument is a sub-buffer
  (``clCreateSubBuffer``) over its slice and halo. Neighbouring slices overlap by their
  halos, which OpenCL allows because no part writes an input. An array that is not cut is
  uploaded once and every part reads the same buffer.
- An output is one parent too, the parts' regions laid end to end (each at a multiple of the
  alignment), so no two parts write the same bytes: a part writes its halo elements as well
  (it is the kernel on a smaller problem), so its region cannot be its range of the whole
  array. One download of the parent gathers every part; the host keeps each part's own range.
- A sub-buffer's origin must be a multiple of every device's ``MEM_BASE_ADDR_ALIGN``: where a
  part's input slice does not start on one, or an input is cut along an inner axis (a part's
  slice is then not one run of bytes), the whole run copies, as every run did before.

Where the platform does not allow it, the parts keep buffers of their own (``copies``): GPUs
(in one context over several GPUs, NVIDIA's OpenCL moves a buffer whole to the device whose
queue uses it, so a parent shared by two GPUs would cross between them every launch:
docs/results/2026-11-26-split-reserve.md), devices of different platforms or contexts, and
CUDA devices (their parts always copy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

import numpy as np

from perfport._core import ArrayArg, Backend, DeviceInfo, DeviceType, KernelSpec
from perfport.devices import Session, open_session, open_sessions, opencl_platform

Opener = Callable[[DeviceInfo], Session]  # opens a part's session: any backend's Session
# Opens a session per device, in order (e.g. ``perfport.devices.open_sessions``).
GroupOpener = Callable[[Sequence[DeviceInfo]], list[Session]]


class PartRun(Protocol):
    """What a part's run (``perfport.split.execute.PartRun``) offers its buffers."""

    buffers: dict[str, Any]

    @property
    def spec(self) -> KernelSpec: ...
    @property
    def session(self) -> Session: ...
    @property
    def cut(self) -> Mapping[str, Any]: ...

    def bind(self) -> None: ...
    def span(self, a: ArrayArg) -> tuple[int, int] | None: ...
    def own_count(self, a: ArrayArg) -> int: ...
    def piece(self, a: ArrayArg, array: np.ndarray) -> np.ndarray: ...
    def place(self, name: str, mine: np.ndarray, outputs: dict[str, np.ndarray]) -> None: ...


SUB_BUFFERS = "sub-buffers"
COPIES = "copies"


@dataclass(frozen=True)
class Buffers:
    """How a run's parts got their buffers: ``sub-buffers`` of one parent per array, or
    ``copies`` of their own (``why``: the reason)."""

    kind: str = COPIES
    why: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "why": self.why}


def device_refusal(devices: Sequence[DeviceInfo]) -> str | None:
    """Why parts on ``devices`` keep buffers of their own; None where they may share."""
    if len(devices) < 2:
        return "one part"
    other = [d.id for d in devices if d.backend is not Backend.OPENCL]
    if other:
        return f"{other[0]} is not an OpenCL device: CUDA parts always copy"
    if len({opencl_platform(d.id) for d in devices}) > 1:
        return "the parts are on more than one OpenCL platform: no one context holds them"
    not_cpu = [d for d in devices if d.type is not DeviceType.CPU]
    if not_cpu:
        return (
            f"{not_cpu[0].id} is a {not_cpu[0].type.value}, not a CPU: in one context a "
            "driver moves a buffer whole to each device that uses it, so only CPU devices "
            "share one"
        )
    return None


def open_parts(
    devices: Sequence[DeviceInfo], opener: Opener, group: GroupOpener | None, split: bool
) -> tuple[list[Session], str | None]:
    """The parts' sessions, and why they will copy (None: they may share buffers). Only parts
    that may share open in one context (``group``; by default ``open_sessions`` with the
    default ``opener``), so GPUs keep the contexts of their own they always had."""
    why = device_refusal(devices) if split else "one part"
    if group is None and opener is open_session:
        group = open_sessions
    if why is None and group is None:
        why = "the sessions were opened one by one (an opener without a group opener)"
    if why is None and group is not None:
        return group(devices), None
    sessions: list[Session] = []
    try:
        for d in devices:
            sessions.append(opener(d))
    except BaseException:
        for s in sessions:
            s.close()
        raise
    return sessions, why


def session_refusal(sessions: Sequence[Session]) -> str | None:
    """Why these sessions cannot share buffers; None where they are of one context."""
    if not all(sessions[0].shares_buffers_with(s) for s in sessions[1:]):
        return "the devices are not in one context (the driver gave them a context each)"
    if any(s.sub_buffer_align() is None for s in sessions):
        return "a session makes no sub-buffers"
    return None


def packed(sizes: Sequence[int], align: int) -> list[int]:
    """Offsets of regions of ``sizes`` bytes laid end to end, each at a multiple of ``align``."""
    offsets, at = [], 0
    for size in sizes:
        at = -(-at // align) * align
        offsets.append(at)
        at += size
    return offsets


def disjoint(regions: Sequence[tuple[int, int]]) -> bool:
    """Whether no two (offset, bytes) regions share a byte."""
    spans = sorted((o, o + n) for o, n in regions if n > 0)
    return all(a[1] <= b[0] for a, b in pairwise(spans))


@dataclass(frozen=True)
class Layout:
    """Where each part's piece of each array lies in its parent, in bytes: by array name, one
    (offset, bytes) per part; an array not cut is shared whole (not listed)."""

    inputs: Mapping[str, Sequence[tuple[int, int]]]
    outputs: Mapping[str, Sequence[tuple[int, int]]]


def layout(runs: Sequence[PartRun], dtypes: Mapping[str, np.dtype], align: int) -> Layout | str:
    """The parents' layout for ``runs``, or why they copy: an input cut along an inner axis,
    or a part's input slice not starting at a multiple of ``align`` bytes."""
    spec = runs[0].spec
    inputs: dict[str, list[tuple[int, int]]] = {}
    outputs: dict[str, list[tuple[int, int]]] = {}
    for a in spec.args:
        if not isinstance(a, ArrayArg) or a.name not in runs[0].cut:
            continue
        size = dtypes[a.name].itemsize
        if a.output:  # regions of their own, end to end: the parts never write one byte twice
            sizes = [r.own_count(a) * size for r in runs]
            outputs[a.name] = list(zip(packed(sizes, align), sizes, strict=True))
            assert disjoint(outputs[a.name]), outputs[a.name]
            continue
        spans = [r.span(a) for r in runs]
        for i, s in enumerate(spans):
            if s is None:
                return (
                    f"{a.name} is not cut in whole rows of its outermost axis: a part's slice "
                    "is not one run of bytes"
                )
            if s[0] * size % align:
                return (
                    f"part {i}'s {a.name} (with its halo) starts at byte {s[0] * size}, not a "
                    f"multiple of the devices' {align}-byte MEM_BASE_ADDR_ALIGN"
                )
        inputs[a.name] = [(s[0] * size, s[1] * size) for s in spans if s is not None]
    return Layout(inputs, outputs)


class Shared:
    """The parents of one split run on the first part's session and every part's
    sub-buffers of them, bound as its launch arguments."""

    def __init__(self, runs: Sequence[PartRun], plan: Layout, arrays: Mapping[str, np.ndarray]):
        self.runs, self.plan = runs, plan
        first = runs[0].session
        self.parents: dict[str, Any] = {}
        for a in runs[0].spec.args:
            if not isinstance(a, ArrayArg):
                continue
            out = plan.outputs.get(a.name)
            if out:  # each part's piece of the initial values, packed
                host = np.zeros(max(o + n for o, n in out), np.uint8)
                for r, (o, n) in zip(runs, out, strict=True):
                    host[o : o + n] = r.piece(a, arrays[a.name]).reshape(-1).view(np.uint8)
                self.parents[a.name] = first.upload(host)
            else:
                self.parents[a.name] = first.upload(arrays[a.name])
            regions = out or plan.inputs.get(a.name)
            for i, r in enumerate(runs):
                r.buffers[a.name] = (
                    r.session.sub_buffer(self.parents[a.name], *regions[i])
                    if regions
                    else self.parents[a.name]  # not cut: every part reads the whole
                )
        for r in runs:
            r.bind()

    def gather(self, outputs: dict[str, np.ndarray]) -> None:
        """One download of each output's parent; each part's own range into ``outputs``."""
        first = self.runs[0].session
        for name, whole in outputs.items():
            regions = self.plan.outputs[name]
            host = np.empty(max(o + n for o, n in regions), np.uint8)
            first.download(self.parents[name], host)
            for r, (o, n) in zip(self.runs, regions, strict=True):
                r.place(name, host[o : o + n].view(whole.dtype), outputs)


def share(
    runs: Sequence[PartRun], arrays: Mapping[str, np.ndarray], why: str | None
) -> tuple[Shared | None, Buffers]:
    """Sub-buffers for ``runs`` where their sessions and the layout allow (``why``: already
    refused); else None and the reason, and the caller loads each part's copies."""
    why = why or session_refusal([r.session for r in runs])
    if why is None:
        align = math.lcm(*(r.session.sub_buffer_align() or 1 for r in runs))
        plan = layout(runs, {n: a.dtype for n, a in arrays.items()}, align)
        if isinstance(plan, Layout):
            return Shared(runs, plan, arrays), Buffers(SUB_BUFFERS)
        why = plan
    return None, Buffers(COPIES, why)
