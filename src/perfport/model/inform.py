"""Which parameters the measurements inform, and which collection would inform the others.

A parameter whose Jacobian column is zero over every measurement (its feature is zero in all
of them: no barrier kernel was measured, say) cannot be fitted: least squares leaves it at its
starting value (1 s per barrier), and every prediction that uses it is nonsense. Calibration
refuses such a parameter, naming it and the collection to run (``perfport model collect
--filter ...``); evaluation may pin it and refuse only the predictions it would change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from perfport.model.model import Model

_OP = re.compile(r"f_op_(float32|float64)_(madd|mul|add|div)\Z")
_LOCAL_STRIDE = re.compile(r"f_mem_access_local_(float32|float64)_load_lstrides:\{0:(\d+)\}\Z")
_STORE = re.compile(r"f_mem_access_global_(float32|float64)_store(?:_lstrides:\{0:(\d+)\})?\Z")
_STORE_STRIDES = ("1", "2", "4")  # gstore_pattern's lid_stride_0 values
# Feature stem -> the collection filter whose kernels vary it (generators.all_generators).
_STEMS = (
    ("f_sync_barrier_local", "barrier_pattern"),
    ("f_sync_kernel_launch", "empty_kernel"),
    ("f_thread_groups", "empty_kernel"),
    ("f_mem_access_tag:", "work_removal"),
    ("f_mem_access_local", "lmem_pattern"),
    ("f_mem_transactions", "lmem_stride_pattern"),
    ("f_mem_access_global", "gmem_pattern"),
)


def collection_filter(feature: str) -> str | None:
    """The ``--filter`` tags of the collection that varies ``feature``, if there is one."""
    op = _OP.match(feature)
    if op:
        return f"flops_{op.group(2)}_pattern dtype:{op.group(1)}"
    stride = _LOCAL_STRIDE.match(feature)
    if stride:  # local loads at one lid(0) stride: only lmem_stride_pattern varies them
        return f"lmem_stride_pattern dtype:{stride.group(1)} lid_stride_0:{stride.group(2)}"
    store = _STORE.match(feature)
    if store:  # every other kernel that stores also loads: only gstore_pattern separates them
        tags = f"gstore_pattern dtype:{store.group(1)}"
        return tags + (
            f" lid_stride_0:{store.group(2)}" if store.group(2) in _STORE_STRIDES else ""
        )
    for stem, tags in _STEMS:
        if feature.startswith(stem):
            dtype = re.search(r"_(float32|float64)", feature)
            return tags + (f" dtype:{dtype.group(1)}" if dtype and "pattern" in tags else "")
    return None


def uninformed(
    model: Model, columns: Mapping[str, np.ndarray], points: Sequence[Mapping[str, float]]
) -> tuple[str, ...]:
    """The parameters whose Jacobian column is zero over all the data at every one of
    ``points`` (parameter values): at the start and at the fit, so that a step saturated at
    one of them does not pass for a feature the data lacks."""
    names = model.parameters
    zero = np.ones(len(names), dtype=bool)
    for x in points:
        with np.errstate(all="ignore"):
            jac = np.asarray(model.jacobian(x, columns), dtype=float)
        zero &= ~np.any(np.nan_to_num(jac, nan=1.0) != 0, axis=0)
    return tuple(p for p, z in zip(names, zero, strict=True) if z)


def reason(model: Model, parameter: str, columns: Mapping[str, np.ndarray]) -> str:
    """One line: why ``parameter`` is not informed and what to collect."""
    from perfport.model.expression import Formula

    near = {
        f
        for term in model.terms()
        if parameter in Formula.parse(term, "model term").parameters
        for f in Formula.parse(term, "model term").features
    }
    zero = sorted(f for f in near if f in columns and not np.any(columns[f] != 0))
    n = len(next(iter(columns.values()), ()))
    if not zero:
        return (f"{parameter} is informed by no measurement (its Jacobian column is zero over "
                f"all {n}); give measurements that vary its term, or drop the term")  # fmt: skip
    filters = sorted({f for f in map(collection_filter, zero) if f})
    how = (
        "; measure it: " + ", ".join(f"'perfport model collect --filter {f}'" for f in filters)
        if filters
        else "; measure kernels where it is not zero"
    )
    return (f"{parameter} is informed by no measurement: {', '.join(zero)} is zero in all {n} "
            f"of them{how}, or drop the term from the model")  # fmt: skip
