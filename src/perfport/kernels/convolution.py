"""Erdem et al.'s 1D convolution with a local-memory tile (erdem2018 section 5).

A work-group of ``wg`` work-items loads the ``wg + mask - 1`` input elements it needs into
local memory once (their Eq. 11) and each work-item then computes one output. The mask size
is a problem value; tuning picks the work-group size.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from perfport._core import (
    ArrayArg,
    Config,
    KernelSpec,
    Language,
    LocalArg,
    Param,
    ParamKind,
    Problem,
    ScalarArg,
    SplitArray,
    SplitDim,
)

_SOURCE = r"""
// out[i] = sum_j in[i + j] * mask[j], j < MASK. Defines: ELEM, MASK.
KERNEL void convolution(GLOBAL const ELEM* RESTRICT in, GLOBAL const ELEM* RESTRICT mask,
                        GLOBAL ELEM* RESTRICT out, int n LOCAL_PARAM(ELEM, tile)) {
    LOCAL_DECL(ELEM, tile)
    const int lid = LID(0), wg = LSIZE(0), base = GROUP(0) * wg;
    for (int i = lid; i < wg + MASK - 1; i += wg)
        tile[i] = base + i < n + MASK - 1 ? in[base + i] : (ELEM)0;
    BARRIER();
    const int gid = base + lid;
    if (gid < n) {
        ELEM sum = 0;
        for (int j = 0; j < MASK; ++j)
            sum += tile[lid + j] * mask[j];
        out[gid] = sum;
    }
}
"""


def convolution_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    x, mask = inputs["input"].astype(np.float64), inputs["mask"].astype(np.float64)
    out = np.correlate(x, mask, mode="valid")[: int(p["n"])]
    return {"output": out.astype(inputs["input"].dtype)}


def convolution() -> KernelSpec:
    return KernelSpec(
        name="convolution",
        source=_SOURCE,
        entry="convolution",
        language=Language.PORTABLE,
        params=(Param("wg", tuple(2**i for i in range(11)), ParamKind.LAUNCH),),
        global_size=("round_up(n, wg)",),
        local_size=("wg",),
        args=(
            ArrayArg("input", "dtype", ("n + mask - 1",)),
            ArrayArg("mask", "dtype", ("mask",)),
            ArrayArg("output", "dtype", ("n",), output=True),
            ScalarArg("n", "int", "n"),
            LocalArg("tile", "dtype", "wg + mask - 1"),
        ),
        problem=Problem.of(n=1 << 20, mask=17, dtype="float"),
        defines=(("ELEM", "ctype(dtype)"), ("MASK", "mask")),
        default=Config.of({"wg": 64}),
        reference=convolution_reference,
        # A part of n outputs reads its n + mask - 1 inputs: the halo is in the input's shape.
        split=(SplitDim(0, "n", (SplitArray("input"), SplitArray("output"))),),
        doc="erdem2018's 1D convolution with a local-memory tile of wg + mask - 1 elements.",
    )
