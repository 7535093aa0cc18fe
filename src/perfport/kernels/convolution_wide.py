"""The 1D convolution with outputs per work-item and a direct-load variant.

The built-in ``convolution`` (erdem2018) computes one output per work-item from a local-memory
tile and tunes only the work-group; it stays as it is so its stored results keep their
identity. ``convolution_wide`` adds ``per_item``, the outputs each work-item computes (strided
by the work-group size, so that neighbouring work-items always touch neighbouring addresses),
and ``variant``: ``tile`` stages the ``wg * per_item + mask - 1`` inputs of a work-group in
local memory, ``direct`` reads them from global memory through the caches.
``per_item=1 variant=tile`` is the old kernel, and the default.
"""

from __future__ import annotations

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
from perfport.kernels.convolution import convolution_reference

PER_ITEM_VALUES: tuple[int, ...] = (1, 2, 4, 8, 16)
VARIANTS: tuple[str, ...] = ("tile", "direct")

_SOURCE = r"""
// out[i] = sum_j in[i + j] * mask[j], j < MASK; PER_ITEM outputs per work-item, strided by the
// work-group size. Defines: ELEM, MASK, PER_ITEM, DIRECT.
KERNEL void convolution(GLOBAL const ELEM* RESTRICT in, GLOBAL const ELEM* RESTRICT mask,
                        GLOBAL ELEM* RESTRICT out, int n LOCAL_PARAM(ELEM, tile)) {
    const int lid = LID(0), wg = LSIZE(0), base = GROUP(0) * wg * PER_ITEM;
#if !DIRECT
    LOCAL_DECL(ELEM, tile)
    for (int i = lid; i < wg * PER_ITEM + MASK - 1; i += wg)
        tile[i] = base + i < n + MASK - 1 ? in[base + i] : (ELEM)0;
    BARRIER();
#endif
    for (int k = 0; k < PER_ITEM; ++k) {
        const int at = k * wg + lid, gid = base + at;
        if (gid < n) {
            ELEM sum = 0;
            for (int j = 0; j < MASK; ++j)
#if DIRECT
                sum += in[gid + j] * mask[j];
#else
                sum += tile[at + j] * mask[j];
#endif
            out[gid] = sum;
        }
    }
}
"""


def convolution_wide() -> KernelSpec:
    return KernelSpec(
        name="convolution_wide",
        source=_SOURCE,
        entry="convolution",
        language=Language.PORTABLE,
        params=(
            Param("wg", tuple(2**i for i in range(11)), ParamKind.LAUNCH),
            Param("per_item", PER_ITEM_VALUES, define="PER_ITEM"),
            Param("variant", VARIANTS, define="CONVOLUTION_VARIANT"),
        ),
        global_size=("round_up(ceil_div(n, per_item), wg)",),
        local_size=("wg",),
        args=(
            ArrayArg("input", "dtype", ("n + mask - 1",)),
            ArrayArg("mask", "dtype", ("mask",)),
            ArrayArg("output", "dtype", ("n",), output=True),
            ScalarArg("n", "int", "n"),
            # The direct variant stages nothing; one element keeps the argument list fixed.
            LocalArg("tile", "dtype", "wg * per_item + mask - 1 if variant == 'tile' else 1"),
        ),
        problem=Problem.of(n=1 << 20, mask=17, dtype="float"),
        defines=(
            ("ELEM", "ctype(dtype)"),
            ("MASK", "mask"),
            ("DIRECT", "variant == 'direct'"),
        ),
        default=Config.of({"wg": 64, "per_item": 1, "variant": "tile"}),
        reference=convolution_reference,
        split=(SplitDim(0, "n", (SplitArray("input"), SplitArray("output")), granule="per_item"),),
        doc="convolution with per_item outputs per work-item (strided by the work-group) and "
        "a local-memory tile or direct loads.",
    )
