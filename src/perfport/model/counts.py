"""Kernel statistics as records: symbolic counts in the problem sizes, evaluated cheaply.

A :class:`KernelStats` is what loopy's counting gives for one kernel (``gather.py`` makes it),
held as text in perfport's safe expression syntax (``_core/expr.py``): every count is a
piecewise quasi-polynomial written as ``a if cond else (b if cond2 else 0)``. Text survives a
JSON file and a process; the parsed expressions are compiled once per record, so evaluating
at a new size costs a few closure calls per count and never touches loopy again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

from perfport._core.errors import ExpressionError, SpecError
from perfport._core.expr import Expr

FORMAT = "perfport-kernel-stats/1"


class Granularity(Enum):
    """How often loopy counts an operation: once per work-item, sub-group or work-group."""

    WORKITEM = "workitem"
    SUBGROUP = "subgroup"
    WORKGROUP = "workgroup"


class SyncKind(Enum):
    """Synchronisations loopy counts (per work-item) and kernel launches (per kernel)."""

    BARRIER_LOCAL = "barrier_local"
    BARRIER_GLOBAL = "barrier_global"
    KERNEL_LAUNCH = "kernel_launch"


@dataclass(frozen=True)
class OpCount:
    """Arithmetic operations of one kind: ``op`` is add, mul, madd, div, pow, func:NAME ..."""

    dtype: str
    op: str
    granularity: Granularity
    count: str


@dataclass(frozen=True)
class MemCount:
    """Memory accesses of one pattern. Strides are expressions in the problem sizes, in
    elements, keyed by axis; an axis absent from ``lstrides`` or ``gstrides`` has stride 0.
    ``footprint`` counts the distinct elements of ``variable`` accessed in ``direction`` (all
    of its patterns together), so the access-to-footprint ratio is ``accesses / footprint``;
    empty for local memory and where loopy cannot bound the footprint. ``issued`` counts the
    accesses as a compiler issues them (``hoist.py``: loop-invariant local loads once per
    iteration of the loops they depend on); None in statistics gathered before it existed."""

    mtype: str  # global | local
    dtype: str
    direction: str  # load | store
    variable: str
    tags: tuple[str, ...]
    lstrides: tuple[tuple[int, str], ...]
    gstrides: tuple[tuple[int, str], ...]
    granularity: Granularity
    count: str
    footprint: str
    issued: str | None = None


@dataclass(frozen=True)
class SyncCount:
    kind: SyncKind
    count: str


@dataclass(frozen=True)
class KernelStats:
    """Symbolic statistics of one kernel. ``guard`` is the kernel's assumptions (counts are
    valid only where it holds); ``approximations`` says which counts are not exact and why
    (empty: every count is exact)."""

    kernel: str
    params: tuple[str, ...]
    subgroup_size: int
    ops: tuple[OpCount, ...]
    mem: tuple[MemCount, ...]
    sync: tuple[SyncCount, ...]
    thread_groups: str
    work_group_size: str
    guard: str
    approximations: tuple[str, ...] = ()
    source: str = field(default="", compare=False)
    # Bytes of local memory one work-group declares (its local temporaries), an expression in
    # the parameters; None in statistics gathered before it was recorded.
    local_mem_bytes: str | None = None

    @cached_property
    def _compiled(self) -> _Compiled:
        return _Compiled(self)

    def evaluate(self, sizes: Mapping[str, Any]) -> EvaluatedStats:
        """Every count at ``sizes`` (one value per parameter of the kernel)."""
        return self._compiled.evaluate(sizes)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kernel": self.kernel,
            "params": list(self.params),
            "subgroup_size": self.subgroup_size,
            "ops": [_op_json(o) for o in self.ops],
            "mem": [mem_json(m) for m in self.mem],
            "sync": [{"kind": s.kind.value, "count": s.count} for s in self.sync],
            "thread_groups": self.thread_groups,
            "work_group_size": self.work_group_size,
            "guard": self.guard,
            "approximations": list(self.approximations),
            **({"local_mem_bytes": self.local_mem_bytes} if self.local_mem_bytes else {}),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> KernelStats:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise SpecError(f"not perfport kernel statistics (expected format {FORMAT!r})")
        try:
            return KernelStats(
                kernel=str(data["kernel"]),
                params=tuple(str(p) for p in data["params"]),
                subgroup_size=int(data["subgroup_size"]),
                ops=tuple(
                    OpCount(o["dtype"], o["op"], Granularity(o["granularity"]), o["count"])
                    for o in data["ops"]
                ),
                mem=tuple(_mem_from_json(m) for m in data["mem"]),
                sync=tuple(SyncCount(SyncKind(s["kind"]), s["count"]) for s in data["sync"]),
                thread_groups=str(data["thread_groups"]),
                work_group_size=str(data["work_group_size"]),
                guard=str(data["guard"]),
                approximations=tuple(str(a) for a in data.get("approximations", ())),
                local_mem_bytes=_optional_text(data.get("local_mem_bytes")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError(
                f"kernel statistics file is damaged ({exc}); gather them again"
            ) from None

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)


@dataclass(frozen=True)
class EvaluatedMem:
    """One memory pattern at one size: strides and the access-to-footprint ratio as numbers
    (``afr`` is None where the footprint is unknown)."""

    pattern: MemCount
    count: float
    lstrides: Mapping[int, int]
    gstrides: Mapping[int, int]
    afr: float | None
    issued: float | None = None  # None: the statistics predate the issued count


@dataclass(frozen=True)
class EvaluatedStats:
    stats: KernelStats
    sizes: Mapping[str, Any]
    ops: tuple[tuple[OpCount, float], ...]
    mem: tuple[EvaluatedMem, ...]
    sync: tuple[tuple[SyncKind, float], ...]
    thread_groups: float
    work_group_size: float
    # The work-group's size per axis, lid(0) first (empty where the shape is not known).
    local_sizes: tuple[int, ...] = ()
    local_mem_bytes: float | None = None  # None: the statistics predate the count


class _Compiled:
    """The parsed expressions of one KernelStats (built once, on first evaluation)."""

    def __init__(self, stats: KernelStats) -> None:
        what = f"statistics of {stats.kernel}"
        self.stats = stats
        self.guard = Expr(stats.guard, what)
        self.ops = [(o, Expr(o.count, what)) for o in stats.ops]
        self.mem = [
            (
                m,
                Expr(m.count, what),
                [(a, Expr(s, what)) for a, s in m.lstrides],
                [(a, Expr(s, what)) for a, s in m.gstrides],
                Expr(m.footprint, what) if m.footprint else None,
                Expr(m.issued, what) if m.issued is not None else None,
            )
            for m in stats.mem
        ]
        self.sync = [(s.kind, Expr(s.count, what)) for s in stats.sync]
        self.groups = Expr(stats.thread_groups, what)
        self.wg_size = Expr(stats.work_group_size, what)
        self.axes = [Expr(a, what) for a in work_group_axes(stats.work_group_size)]
        self.local_bytes = Expr(stats.local_mem_bytes, what) if stats.local_mem_bytes else None

    def evaluate(self, sizes: Mapping[str, Any]) -> EvaluatedStats:
        stats = self.stats
        missing = [p for p in stats.params if p not in sizes]
        if missing:
            raise ExpressionError(
                f"kernel {stats.kernel} needs a value for {', '.join(missing)}; "
                f"give --problem {missing[0]}=VALUE"
            )
        env = {p: sizes[p] for p in stats.params}
        if not self.guard.value(env):
            shown = ", ".join(f"{k}={v}" for k, v in env.items())
            raise ExpressionError(
                f"{shown} is outside the assumptions of kernel {stats.kernel} "
                f"({stats.guard}); pick sizes that satisfy them"
            )
        mem = []
        for pattern, count, lstr, gstr, footprint, issued in self.mem:
            n = float(count.value(env))
            fp = float(footprint.value(env)) if footprint is not None else 0.0
            per_item = n * _items_per_count(pattern.granularity, stats, env, self.wg_size)
            mem.append(
                EvaluatedMem(
                    pattern,
                    n,
                    {a: int(e.value(env)) for a, e in lstr},
                    {a: int(e.value(env)) for a, e in gstr},
                    per_item / fp if fp > 0 else None,
                    float(issued.value(env)) if issued is not None else None,
                )
            )
        groups = float(self.groups.value(env))
        if groups < 0:
            # Only sizes outside the kernel's domain count below zero (a loop bound of -64).
            shown = ", ".join(f"{k}={v}" for k, v in env.items())
            raise ExpressionError(
                f"{shown} gives kernel {stats.kernel} {groups:g} work-groups: a size "
                f"outside its domain; pick sizes that make its loops non-empty"
            )
        return EvaluatedStats(
            stats=stats,
            sizes=env,
            ops=tuple((o, float(e.value(env))) for o, e in self.ops),
            mem=tuple(mem),
            sync=tuple((k, float(e.value(env))) for k, e in self.sync),
            thread_groups=groups,
            work_group_size=float(self.wg_size.value(env)),
            local_sizes=tuple(int(a.value(env)) for a in self.axes),
            local_mem_bytes=float(self.local_bytes.value(env)) if self.local_bytes else None,
        )


def work_group_axes(text: str) -> list[str]:
    """The per-axis factors of a work-group size written ``(l0) * (l1) * ...`` (gather's
    form, lid(0) first); ``1`` is one axis of size 1."""
    factors, depth, current = [], 0, ""
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        # Only a product sign between whole parenthesised factors separates two axes.
        if depth == 0 and text.startswith(" * ", i) and current.endswith(")"):
            factors.append(current)
            current = ""
            continue
        if depth == 0 and current == "" and ch in " *":
            continue
        current += ch
    return [*factors, current] if current.strip() else factors


def _items_per_count(
    granularity: Granularity, stats: KernelStats, env: Mapping[str, Any], wg_size: Expr
) -> float:
    """Work-items one count stands for: the access-to-footprint ratio counts element accesses
    of every work-item, and a sub-group count stands for a whole sub-group (at most)."""
    if granularity is Granularity.WORKITEM:
        return 1.0
    group = float(wg_size.value(env))
    if granularity is Granularity.SUBGROUP:
        return float(min(stats.subgroup_size, group))
    return group


def _optional_text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _op_json(o: OpCount) -> dict[str, Any]:
    return {"dtype": o.dtype, "op": o.op, "granularity": o.granularity.value, "count": o.count}


def mem_json(m: MemCount) -> dict[str, Any]:
    """A memory access count as plain JSON (the cache's form; ``perfport model stats`` adds
    the evaluated values)."""
    return {
        "mtype": m.mtype,
        "dtype": m.dtype,
        "direction": m.direction,
        "variable": m.variable,
        "tags": list(m.tags),
        "lstrides": {str(a): s for a, s in m.lstrides},
        "gstrides": {str(a): s for a, s in m.gstrides},
        "granularity": m.granularity.value,
        "count": m.count,
        "footprint": m.footprint,
        **({"issued": m.issued} if m.issued is not None else {}),
    }


def _mem_from_json(m: Mapping[str, Any]) -> MemCount:
    return MemCount(
        mtype=m["mtype"],
        dtype=m["dtype"],
        direction=m["direction"],
        variable=m["variable"],
        tags=tuple(m["tags"]),
        lstrides=tuple((int(a), str(s)) for a, s in m["lstrides"].items()),
        gstrides=tuple((int(a), str(s)) for a, s in m["gstrides"].items()),
        granularity=Granularity(m["granularity"]),
        count=m["count"],
        footprint=m["footprint"],
        issued=str(m["issued"]) if m.get("issued") is not None else None,
    )
