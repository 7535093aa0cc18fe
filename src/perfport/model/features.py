"""Kernel features named as in Stevens and Klöckner's section 6, and user-defined ones.

Built in (fields after ``f_mem_access`` optional, in this order)::

    f_op_<dtype>_<op>                      f_op_float32_madd, f_op_float64_div
    f_mem_access_tag:<tag>_<mtype>_<dtype>_<direction>_lstrides:{..}_gstrides:{..}_afr:<cond>
                                           f_mem_access_global_float32_load_lstrides:{0:1;1:>15}
    f_mem_transactions_<same fields, local only>_banks:<count>x<bytes>
                                           f_mem_transactions_local_float32_load: sub-group
                                           accesses times their bank-conflict degree
    <either of the two>_hoisted            f_mem_transactions_local_float32_hoisted: the
                                           accesses as a compiler issues them (hoist.py)
    f_sync_barrier_local, f_sync_kernel_launch, f_thread_groups
    f_barrier_exposed                      work-items x local barriers per work-item / work-
                                           groups resident per compute unit (resident.py;
                                           0 on a device whose limits are not listed)
    f_cl_wall_time_<platform>_<device>     measured, never counted: an output feature

A name giving the fields in another order, a field or a stride axis twice, or an empty tag is
refused (it would read as a second spelling, or match nothing without a word).

A stride condition is ``{axis:cond;axis:cond}``, a condition a comparison (``>``, ``<``,
``>=``, ``<=``, ``!=``, or none for equality) and an expression in the problem sizes
(``>15``, ``<n``, ``16``); an axis a kernel does not index has stride 0. ``afr`` is the
access-to-footprint ratio of the access pattern: its element accesses per distinct element
its variable is accessed at in that direction (by all of the variable's patterns); a pattern
whose footprint loopy cannot bound matches no ``afr`` condition. An ``afr`` condition may be
written in braces, ``afr:{>n/64}``: in a model formula an operator after an unbraced one
would be the formula's (``expression.py`` refuses that reading as ambiguous).

``f_mem_transactions`` counts local accesses as the hardware serves them: each sub-group
access (loopy counts local accesses per sub-group) weighted by its bank-conflict degree
(``banks.py``), from the pattern's lid strides, the work-group's shape, the sub-group width
the statistics were gathered with, and ``banks:<count>x<bytes>`` (default 32 banks of 4
bytes), so one cost per transaction covers every stride and work-group layout.

The field ``hoisted`` counts the accesses a compiler issues instead of loopy's count: a
local load whose index does not change in an enclosing sequential loop (and whose array is
neither written nor fenced by a barrier in it) once per iteration of the loops it depends
on (``hoist.py``). Every other access counts as loopy counts it, and without the field every
feature keeps loopy's count, so models written before it mean what they meant.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

from perfport._core.errors import ExpressionError
from perfport._core.expr import Expr
from perfport.model.banks import BANK_BYTES, BANKS, conflict_degree
from perfport.model.counts import EvaluatedMem, EvaluatedStats, Granularity, SyncKind
from perfport.model.errors import ModelError
from perfport.model.expression import FEATURE_TOKEN, Formula
from perfport.model.resident import barrier_exposed, limits_for

_CONDITION = re.compile(r"^(>=|<=|!=|==|>|<|=)?(.+)$")
_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64"} | {
    f"uint{b}" for b in (8, 16, 32, 64)
}
# loopy's operation kinds (loopy.statistics), and the multiply-add perfport counts; a
# function call is func:<name>.
_OPS = ("add", "mul", "madd", "div", "pow", "shift", "bw", "maxmin")
_BUILT_IN = (
    "f_op_<dtype>_<op>, f_mem_access_..., f_mem_transactions_local_..., "
    "f_sync_barrier_local, f_sync_kernel_launch, "
    "f_thread_groups, f_barrier_exposed, f_cl_wall_time_<platform>_<device>"
)


class FeatureKind(Enum):
    OP = "op"
    MEM = "mem"
    TRANSACTIONS = "transactions"
    SYNC = "sync"
    THREAD_GROUPS = "thread_groups"
    BARRIER_EXPOSED = "barrier_exposed"
    WALL_TIME = "wall_time"


@dataclass(frozen=True)
class Condition:
    """``value <op> bound``, the bound an expression in the problem sizes."""

    op: str
    bound: str

    @cached_property
    def _bound(self) -> Expr:
        return Expr(self.bound, "feature condition")

    def holds(self, value: float, sizes: Mapping[str, Any]) -> bool:
        bound = self._bound.value(sizes)
        return {
            "==": value == bound,
            "!=": value != bound,
            ">": value > bound,
            "<": value < bound,
            ">=": value >= bound,
            "<=": value <= bound,
        }[self.op]


@dataclass(frozen=True)
class MemPattern:
    tag: str | None = None
    mtype: str | None = None
    dtype: str | None = None
    direction: str | None = None
    lstrides: tuple[tuple[int, Condition], ...] = ()
    gstrides: tuple[tuple[int, Condition], ...] = ()
    afr: Condition | None = None
    banks: tuple[int, int] = (BANKS, BANK_BYTES)  # count, bytes: transactions only
    hoisted: bool = False  # the issued count (hoist.py) in place of loopy's

    def count(self, m: EvaluatedMem, feature: str) -> float:
        """The accesses ``m`` stands for under this pattern: loopy's, or the issued count."""
        if not self.hoisted:
            return m.count
        if m.issued is None:
            raise ModelError(
                f"feature {feature!r} needs the issued access count, which these statistics "
                "predate; gather them again (perfport model stats, or clear the stats cache)"
            )
        return m.issued

    def matches(self, m: EvaluatedMem, sizes: Mapping[str, Any]) -> bool:
        p = m.pattern
        if self.tag is not None and self.tag not in p.tags:
            return False
        for want, have in (
            (self.mtype, p.mtype),
            (self.dtype, p.dtype),
            (self.direction, p.direction),
        ):
            if want is not None and want != have:
                return False
        for conditions, strides in ((self.lstrides, m.lstrides), (self.gstrides, m.gstrides)):
            if not all(c.holds(strides.get(axis, 0), sizes) for axis, c in conditions):
                return False
        return self.afr is None or (m.afr is not None and self.afr.holds(m.afr, sizes))


@dataclass(frozen=True)
class Feature:
    """A parsed built-in feature name."""

    name: str
    kind: FeatureKind
    dtype: str = ""
    op: str = ""
    sync: SyncKind | None = None
    pattern: MemPattern | None = None
    platform: str = ""
    device: str = ""

    def value(self, stats: EvaluatedStats, device: str = "") -> float:
        """This feature of a kernel at the sizes ``stats`` were evaluated at, on the device
        named ``device`` (only ``f_barrier_exposed`` depends on it)."""
        if self.kind is FeatureKind.OP:
            return sum(v for o, v in stats.ops if o.dtype == self.dtype and o.op == self.op)
        if self.kind is FeatureKind.MEM:
            assert self.pattern is not None
            pattern = self.pattern
            return sum(
                pattern.count(m, self.name) for m in stats.mem if pattern.matches(m, stats.sizes)
            )
        if self.kind is FeatureKind.TRANSACTIONS:
            assert self.pattern is not None
            return _transactions(self.pattern, stats, self.name)
        if self.kind is FeatureKind.SYNC:
            return sum(v for k, v in stats.sync if k is self.sync)
        if self.kind is FeatureKind.THREAD_GROUPS:
            return stats.thread_groups
        if self.kind is FeatureKind.BARRIER_EXPOSED:
            return barrier_exposed(stats, limits_for(device))
        raise ModelError(
            f"{self.name} is measured, not counted: give its values as the output of the "
            "calibration data"
        )


@functools.lru_cache(maxsize=4096)  # features are frozen; a model asks for the same ones per size
def parse_feature(name: str) -> Feature:
    """A built-in feature by name, or a one-line ModelError naming the valid forms."""
    if name == "f_thread_groups":
        return Feature(name, FeatureKind.THREAD_GROUPS)
    if name == "f_barrier_exposed":
        return Feature(name, FeatureKind.BARRIER_EXPOSED)
    if name.startswith("f_sync_"):
        kinds = {f"f_sync_{k.value}": k for k in SyncKind}
        if name in kinds:
            return Feature(name, FeatureKind.SYNC, sync=kinds[name])
        raise ModelError(
            f"unknown feature {name!r}: synchronisation features are {', '.join(kinds)}"
        )
    if name.startswith("f_op_"):
        dtype, _, op = name[len("f_op_") :].partition("_")
        if dtype not in _DTYPES or not (op in _OPS or (op.startswith("func:") and len(op) > 5)):
            raise ModelError(
                f"unknown feature {name!r}: write f_op_<dtype>_<op>, e.g. f_op_float32_madd "
                f"(dtypes: {', '.join(sorted(_DTYPES))}; ops: {', '.join(_OPS)}, func:<name>)"
            )
        return Feature(name, FeatureKind.OP, dtype=dtype, op=op)
    if name.startswith("f_cl_wall_time_"):
        platform, _, device = name[len("f_cl_wall_time_") :].partition("_")
        if not platform or not device:
            raise ModelError(f"unknown feature {name!r}: write f_cl_wall_time_<platform>_<device>")
        return Feature(name, FeatureKind.WALL_TIME, platform=platform, device=device)
    if name == "f_mem_access" or name.startswith("f_mem_access_"):
        return Feature(name, FeatureKind.MEM, pattern=_mem_pattern(name))
    if name == "f_mem_transactions" or name.startswith("f_mem_transactions_"):
        pattern = _mem_pattern(name, "f_mem_transactions")
        if pattern.mtype not in (None, "local"):
            raise ModelError(
                f"feature {name!r}: transactions are counted for local memory only "
                "(bank conflicts); write f_mem_transactions_local_..."
            )
        return Feature(name, FeatureKind.TRANSACTIONS, pattern=pattern)
    raise ModelError(
        f"unknown feature {name!r}: built-in features are {_BUILT_IN}; define others in the "
        'model file\'s "features" ({"f_name": "expression of features"}) or with FeatureSet.define'
    )


def _fields(text: str) -> list[str]:
    """``a_b:{0:1;1:>2}_c`` split at underscores outside braces."""
    fields, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "_" and depth == 0:
            fields.append(current)
            current = ""
        else:
            current += ch
    return [*fields, current] if current else fields


def _transactions(pattern: MemPattern, stats: EvaluatedStats, feature: str) -> float:
    """Sub-group accesses to local memory matching ``pattern``, each times its conflict
    degree in the kernel's work-group shape."""
    subgroup = stats.stats.subgroup_size
    sizes = stats.local_sizes or (max(1, int(stats.work_group_size)),)
    lanes = min(subgroup, int(stats.work_group_size) or 1)
    total = 0.0
    for m in stats.mem:
        if m.pattern.mtype != "local" or not pattern.matches(m, stats.sizes):
            continue
        # loopy counts local accesses per sub-group; a per-work-item count is lanes per
        # access, a per-work-group one as many accesses as the group has sub-groups.
        per_subgroup = {
            Granularity.SUBGROUP: 1.0,
            Granularity.WORKITEM: 1.0 / lanes,
            Granularity.WORKGROUP: math.ceil((int(stats.work_group_size) or 1) / lanes),
        }[m.pattern.granularity]
        degree = conflict_degree(
            m.lstrides, sizes, subgroup, _itemsize(m.pattern.dtype), *pattern.banks
        )
        total += pattern.count(m, feature) * per_subgroup * degree
    return total


def _itemsize(dtype: str) -> int:
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 4


# The fields of a memory feature, in the order its name must give them (the order the
# error text and docs promise: a name read in another order would be a second spelling).
_FIELD_ORDER = ("tag", "mtype", "dtype", "direction", "lstrides", "gstrides", "afr", "banks",
                "hoisted")  # fmt: skip
_FIELD_HELP = (
    "tag:<tag>, global|local, a dtype, load|store, lstrides:{..}, gstrides:{..}, afr:<cond>, "
    "banks:<count>x<bytes> (transactions), hoisted, in this order"
)


def _mem_pattern(name: str, stem: str = "f_mem_access") -> MemPattern:
    fields = _fields(name[len(stem) :].lstrip("_"))
    found: dict[str, Any] = {}
    i = 0
    while i < len(fields):
        field = fields[i]
        if field.startswith("tag:"):
            tag = field[4:]
            # A tag may hold underscores: it runs up to the next field perfport knows.
            while i + 1 < len(fields) and not _is_mem_field(fields[i + 1]):
                i += 1
                tag += "_" + fields[i]
            if not tag:  # would match no access, silently: every feature of it 0
                raise ModelError(f"feature {name!r}: empty tag; write tag:<tag>, e.g. tag:aLD")
            key, value = "tag", tag
        else:
            key, value = _mem_field(name, field, stem)
        _check_order(name, found, key, field)
        found[key] = value
        i += 1
    return MemPattern(**found)


def _mem_field(name: str, field: str, stem: str) -> tuple[str, Any]:
    """One field other than the tag as (MemPattern's field, its value)."""
    if field in ("global", "local"):
        return "mtype", field
    if field in _DTYPES:
        return "dtype", field
    if field in ("load", "store"):
        return "direction", field
    if field.startswith(("lstrides:", "gstrides:")):
        return field[:8], _strides(name, field[9:])
    if field.startswith("afr:"):  # in braces, it may hold arithmetic in a formula (afr:{>n/64})
        braced = field[4:].startswith("{") and field.endswith("}")
        return "afr", _condition(name, field[5:-1] if braced else field[4:])
    if field.startswith("banks:") and stem == "f_mem_transactions":
        return "banks", _banks(name, field[6:])
    if field == "hoisted":
        return "hoisted", True
    raise ModelError(f"feature {name!r}: {field!r} is not a memory access field; use {_FIELD_HELP}")


def _check_order(name: str, found: dict[str, Any], key: str, field: str) -> None:
    """Refuse a field given twice or after one that follows it."""
    if key in found:
        raise ModelError(f"feature {name!r}: {key} is given twice ({field!r}); give it once")
    later = [k for k in found if _FIELD_ORDER.index(k) > _FIELD_ORDER.index(key)]
    if later:
        raise ModelError(
            f"feature {name!r}: {field!r} comes after the {later[0]} field; write the fields "
            f"as {_FIELD_HELP}, e.g. f_mem_access_global_float32_load"
        )


def _is_mem_field(field: str) -> bool:
    return (
        field in ("global", "local", "load", "store", "hoisted")
        or field in _DTYPES
        or field.startswith(("lstrides:", "gstrides:", "afr:", "banks:"))
    )


def _banks(name: str, text: str) -> tuple[int, int]:
    count, sep, width = text.partition("x")
    if not (sep and count.isdigit() and width.isdigit() and int(count) > 0 and int(width) > 0):
        raise ModelError(f"feature {name!r}: write banks:<count>x<bytes>, e.g. banks:32x4")
    return int(count), int(width)


def _strides(name: str, text: str) -> tuple[tuple[int, Condition], ...]:
    if not (text.startswith("{") and text.endswith("}")):
        raise ModelError(
            f"feature {name!r}: write strides as {{axis:cond;axis:cond}}, e.g. {{0:1;1:>15}}"
        )
    result: list[tuple[int, Condition]] = []
    for item in filter(None, text[1:-1].split(";")):
        axis, sep, cond = item.partition(":")
        if not sep or not axis.strip().isdigit():
            raise ModelError(f"feature {name!r}: stride entry {item!r} is not axis:condition")
        if int(axis) in dict(result):  # one axis, two conditions: which would hold?
            raise ModelError(f"feature {name!r}: stride axis {int(axis)} is given twice; give "
                             "one condition per axis, e.g. {0:1;1:>15}")  # fmt: skip
        result.append((int(axis), _condition(name, cond)))
    return tuple(result)


def _condition(name: str, text: str) -> Condition:
    match = _CONDITION.match(text.strip())
    if not match:
        raise ModelError(f"feature {name!r}: empty condition; write e.g. >1 or 16")
    op = match.group(1) or "=="
    try:
        Expr(match.group(2), f"feature {name}")
    except ExpressionError as exc:
        raise ModelError(str(exc)) from None
    return Condition("==" if op == "=" else op, match.group(2))


UserFeature = Callable[[EvaluatedStats], float]


class FeatureSet:
    """The features a model may use: the built-in ones, plus user-defined ones, each either
    an expression over other features (``define("f_flops", "2*f_op_float32_madd")``) or a
    function of the evaluated statistics (``define_function``)."""

    def __init__(self) -> None:
        self._expressions: dict[str, str] = {}
        self._functions: dict[str, UserFeature] = {}

    def define(self, name: str, expression: str) -> None:
        self._check_name(name)
        formula = Formula.parse(expression, f"feature {name}")  # refused now, not when used
        if formula.parameters:  # a feature is counted, never fitted: its value has no p_
            raise ModelError(
                f"feature {name} = {expression!r} uses the parameter {formula.parameters[0]}; "
                "features may not use parameters: define the feature without it and use "
                f"{formula.parameters[0]} in the model expression"
            )
        for used in FEATURE_TOKEN.findall(expression):
            if used == name:
                raise ModelError(f"feature {name!r} cannot be defined in terms of itself")
            self.check(used)
        self._expressions[name] = expression

    def define_function(self, name: str, function: UserFeature) -> None:
        self._check_name(name)
        self._functions[name] = function

    def _check_name(self, name: str) -> None:
        if not re.fullmatch(r"f_[A-Za-z0-9_]+", name):
            raise ModelError(f"feature name {name!r}: start it with f_, then letters, digits or _")
        if name in self._expressions or name in self._functions:
            raise ModelError(f"feature {name} is already defined; pick another name")
        try:
            parse_feature(name)
        except ModelError:
            return  # not a built-in name: free to define
        raise ModelError(f"feature {name} is built in; give your own feature another name")

    def check(self, name: str) -> None:
        """Raise a one-line ModelError unless ``name`` is a feature this set knows."""
        if name not in self._expressions and name not in self._functions:
            parse_feature(name)

    def definition(self, name: str) -> str | UserFeature | None:
        """A user feature's expression or function; None for a built-in name."""
        return self._expressions.get(name) or self._functions.get(name)

    def value(self, name: str, stats: EvaluatedStats, device: str = "") -> float:
        """``name`` of a kernel's statistics on the device named ``device`` (its driver's
        name; "" for none: features that need a device's limits are then 0)."""
        if name in self._functions:
            return float(self._functions[name](stats))
        if name in self._expressions:
            formula = Formula.parse(self._expressions[name], f"feature {name}")
            inner = {f: self.value(f, stats, device) for f in formula.features}
            return float(formula.evaluate(inner))
        return parse_feature(name).value(stats, device)

    def values(
        self, names: list[str] | tuple[str, ...], stats: EvaluatedStats, device: str = ""
    ) -> dict[str, float]:
        return {n: self.value(n, stats, device) for n in names}
