"""c = a + b: the smallest useful kernel, for smoke tests."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from perfport._core import (
    ArrayArg,
    Config,
    KernelSpec,
    Language,
    Param,
    ParamKind,
    Problem,
    ScalarArg,
    SplitArray,
    SplitDim,
)

_SOURCE = r"""
KERNEL void vector_add(GLOBAL const ELEM* a, GLOBAL const ELEM* b, GLOBAL ELEM* c, int n) {
    const int i = GID(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
"""


def vector_add_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"c": inputs["a"] + inputs["b"]}


def vector_add() -> KernelSpec:
    return KernelSpec(
        name="vector_add",
        source=_SOURCE,
        entry="vector_add",
        language=Language.PORTABLE,
        params=(Param("wg", tuple(2**i for i in range(11)), ParamKind.LAUNCH),),
        global_size=("round_up(n, wg)",),
        local_size=("wg",),
        args=(
            ArrayArg("a", "dtype", ("n",)),
            ArrayArg("b", "dtype", ("n",)),
            ArrayArg("c", "dtype", ("n",), output=True),
            ScalarArg("n", "int", "n"),
        ),
        problem=Problem.of(n=1 << 20, dtype="float"),
        defines=(("ELEM", "ctype(dtype)"),),
        default=Config.of({"wg": 64}),
        reference=vector_add_reference,
        split=(SplitDim(0, "n", (SplitArray("a"), SplitArray("b"), SplitArray("c"))),),
        doc="c = a + b; tunes the work-group size. For smoke tests.",
    )
