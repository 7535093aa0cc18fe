"""What a model leaves out of a kernel: the kinds of its counts that no input feature counts.

A float32 calibration asked about a float64 kernel predicts from its launches and work-groups
alone, each float64 term silently 0; ``uncovered`` says so, one line per family (operations,
memory accesses, local barriers), for ``model predict``, ``model evaluate --kernel`` and model-guided ``tune``
to print. A count is covered where some feature of the model (through its own definitions)
could count it: an operation of the same dtype and kind, a memory access of a compatible tag,
space, dtype and direction (stride and AFR conditions split a kind, so they are not asked).
Integer operations are never reported: loopy counts array-index arithmetic among them, which
no model prices (docs/model.md, approximations).
"""

from __future__ import annotations

from collections.abc import Sequence

from perfport.model.counts import EvaluatedStats, MemCount, SyncKind
from perfport.model.expression import FEATURE_TOKEN
from perfport.model.features import Feature, FeatureKind, FeatureSet, MemPattern, parse_feature


def built_in_features(features: FeatureSet, names: Sequence[str]) -> list[Feature] | None:
    """The built-in features behind ``names``, through the set's expressions; None where one
    is a Python function (what it counts cannot be known)."""
    out: list[Feature] = []
    pending, seen = list(names), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        kind = features.definition(name)
        if kind is None:
            out.append(parse_feature(name))
        elif callable(kind):
            return None
        else:
            pending += FEATURE_TOKEN.findall(kind)
    return out


def uncovered(features: FeatureSet, names: Sequence[str], stats: EvaluatedStats) -> list[str]:
    """One line per family of ``stats``' non-zero counts that no feature of ``names`` counts
    (module docstring); [] where every kind is covered or a feature is a Python function."""
    used = built_in_features(features, names)
    if used is None:
        return []
    ops = sorted(
        {f"{o.dtype} {o.op}" for o, v in stats.ops
         if v > 0 and not _integer(o.dtype) and not any(
             f.kind is FeatureKind.OP and (f.dtype, f.op) == (o.dtype, o.op) for f in used)}
    )  # fmt: skip
    patterns = [f.pattern for f in used if f.pattern is not None]
    mem = sorted(
        {f"{m.pattern.mtype} {m.pattern.dtype} {m.pattern.direction}" for m in stats.mem
         if m.count > 0 and not any(_compatible(p, m.pattern) for p in patterns)}
    )  # fmt: skip
    barriers = sum(v for k, v in stats.sync if k is SyncKind.BARRIER_LOCAL)
    # f_barrier_exposed counts them too (times work-items, over resident groups).
    counted = any((f.kind is FeatureKind.SYNC and f.sync is SyncKind.BARRIER_LOCAL)
                  or f.kind is FeatureKind.BARRIER_EXPOSED for f in used)  # fmt: skip
    lines = []
    if ops:
        lines.append(f"the model has no term for the kernel's {', '.join(ops)} operations: "
                     "the prediction leaves them out; add terms for them (e.g. "
                     f"f_op_{ops[0].replace(' ', '_')}) to the model")  # fmt: skip
    if mem:
        lines.append(f"the model has no term for the kernel's {', '.join(mem)} accesses: the "
                     "prediction leaves them out; add terms for them (e.g. "
                     f"f_mem_access_{mem[0].replace(' ', '_')}) to the model")  # fmt: skip
    if barriers > 0 and not counted:
        lines.append("the model has no term for the kernel's local barriers: the prediction "
                     "leaves them out; add a term for them (e.g. f_sync_barrier_local) to the "
                     "model")  # fmt: skip
    return lines


def _integer(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def _compatible(p: MemPattern, m: MemCount) -> bool:
    """Whether ``p`` can count some access of ``m``'s kind (conditions aside)."""
    return (
        (p.tag is None or p.tag in m.tags)
        and p.mtype in (None, m.mtype)
        and p.dtype in (None, m.dtype)
        and p.direction in (None, m.direction)
    )
