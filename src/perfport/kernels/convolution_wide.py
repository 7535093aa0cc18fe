"""The 1D convolution with outputs per work-item and a direct-load variant.

The built-in ``convolution`` (erdem2018) computes one output per work-item from a local-memory
tile and tunes only the work-group; it stays as it is so its stored results keep their
identity. ``convolution_wide`` adds ``per_item``, the outputs each work-item computes (strided
by the work-group size, so that neighbouring work-items always touch neighbouring addresses),
``vw``, the consecutive outputs in each of those runs (1, 2, 4, 8: with more than one, the
run's inputs and outputs move as aligned vectors of up to 16 bytes, ``float4`` or ``double2``;
``VECTOR_RULES`` keep vectors to 4- and 8-byte elements and small register windows), and
``variant``: ``tile`` stages the ``wg * per_item + mask - 1`` inputs of a work-group in
local memory, ``direct`` reads them from global memory through the caches.
``per_item=1 vw=1 variant=tile`` is the old kernel, and the default; ``vw=1`` keeps every
configuration from before ``vw`` existed.
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
from perfport.kernels.stencil_wide import WIDE_TYPES

PER_ITEM_VALUES: tuple[int, ...] = (1, 2, 4, 8, 16)
VARIANTS: tuple[str, ...] = ("tile", "direct")
VECTOR_WIDTHS: tuple[int, ...] = (1, 2, 4, 8)
# Vectors of 4- or 8-byte elements only, and a direct variant's register window (the runs of
# inputs one run of outputs reads) of at most 256 elements: more spills.
VECTOR_RULES: tuple[str, ...] = (
    f"vw == 1 or dtype in {WIDE_TYPES}",
    "vw == 1 or variant == 'tile' or ceil_div(vw + mask - 1, vw) * vw <= 256",
)

_SOURCE = r"""
// out[i] = sum_j in[i + j] * mask[j], j < MASK; PER_ITEM runs of VW outputs per work-item, the
// runs strided by the work-group. Defines: ELEM, MASK, PER_ITEM, VW, DIRECT, VN (elements per
// vector access: runs start on vector boundaries, so VW > 1 moves aligned vectors).
#if VW > 1
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#define VT PASTE(ELEM, VN)
#define RUNS ((VW + MASK - 1 + VW - 1) / VW)  // runs of inputs one run of outputs reads

DEVICE_FN void load_run(ELEM* dst, GLOBAL const ELEM* RESTRICT p) {
#pragma unroll
    for (int k = 0; k < VW / VN; ++k) {
        const VT v = ((GLOBAL const VT*)p)[k];
        dst[k * VN] = v.x;
        dst[k * VN + 1] = v.y;
#if VN == 4
        dst[k * VN + 2] = v.z;
        dst[k * VN + 3] = v.w;
#endif
    }
}

DEVICE_FN void store_run(GLOBAL ELEM* RESTRICT p, const ELEM* src) {
#pragma unroll
    for (int k = 0; k < VW / VN; ++k) {
        VT v;
        v.x = src[k * VN];
        v.y = src[k * VN + 1];
#if VN == 4
        v.z = src[k * VN + 2];
        v.w = src[k * VN + 3];
#endif
        ((GLOBAL VT*)p)[k] = v;
    }
}
#endif

KERNEL void convolution(GLOBAL const ELEM* RESTRICT in, GLOBAL const ELEM* RESTRICT mask,
                        GLOBAL ELEM* RESTRICT out, int n LOCAL_PARAM(ELEM, tile)) {
    const int lid = LID(0), wg = LSIZE(0), base = GROUP(0) * wg * PER_ITEM * VW;
#if !DIRECT
    LOCAL_DECL(ELEM, tile)
#if VW > 1
    // Whole runs of the tile as vectors where they lie in the input, the rest one by one.
    for (int r = lid; r < wg * PER_ITEM + RUNS - 1; r += wg) {
        ELEM run[VW];
        if (base + (r + 1) * VW <= n + MASK - 1) {
            load_run(run, in + base + r * VW);
        } else {
            for (int j = 0; j < VW; ++j)
                run[j] = base + r * VW + j < n + MASK - 1 ? in[base + r * VW + j] : (ELEM)0;
        }
        for (int j = 0; j < VW && r * VW + j < wg * PER_ITEM * VW + MASK - 1; ++j)
            tile[r * VW + j] = run[j];
    }
#else
    for (int i = lid; i < wg * PER_ITEM + MASK - 1; i += wg)
        tile[i] = base + i < n + MASK - 1 ? in[base + i] : (ELEM)0;
#endif
    BARRIER();
#endif
#if VW > 1
    for (int k = 0; k < PER_ITEM; ++k) {
        const int at = (k * wg + lid) * VW, gid = base + at;
        if (gid >= n)
            break;
        ELEM win[RUNS * VW], res[VW];
#if DIRECT
#pragma unroll
        for (int r = 0; r < RUNS; ++r) {
            if (gid + (r + 1) * VW <= n + MASK - 1) {
                load_run(win + r * VW, in + gid + r * VW);
            } else {
#pragma unroll
                for (int j = 0; j < VW; ++j)
                    win[r * VW + j] = gid + r * VW + j < n + MASK - 1 ? in[gid + r * VW + j] : 0;
            }
        }
#else
#pragma unroll
        for (int i = 0; i < VW + MASK - 1; ++i)
            win[i] = tile[at + i];
#endif
#pragma unroll
        for (int i = 0; i < VW; ++i) {
            ELEM sum = 0;
#pragma unroll  // constant indices keep the window in registers
            for (int j = 0; j < MASK; ++j)
                sum += win[i + j] * mask[j];
            res[i] = sum;
        }
        if (gid + VW <= n) {
            store_run(out + gid, res);
        } else {
#pragma unroll  // constant bounds and indices: the run stays in registers
            for (int i = 0; i < VW; ++i)
                if (gid + i < n)
                    out[gid + i] = res[i];
        }
    }
#else
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
#endif
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
            Param("vw", VECTOR_WIDTHS, define="VW"),
        ),
        global_size=("round_up(ceil_div(n, per_item * vw), wg)",),
        local_size=("wg",),
        args=(
            ArrayArg("input", "dtype", ("n + mask - 1",)),
            ArrayArg("mask", "dtype", ("mask",)),
            ArrayArg("output", "dtype", ("n",), output=True),
            ScalarArg("n", "int", "n"),
            # The direct variant stages nothing; one element keeps the argument list fixed.
            LocalArg("tile", "dtype", "wg * per_item * vw + mask - 1 if variant == 'tile' else 1"),
        ),
        problem=Problem.of(n=1 << 20, mask=17, dtype="float"),
        restrictions=VECTOR_RULES,
        defines=(
            ("ELEM", "ctype(dtype)"),
            ("MASK", "mask"),
            ("DIRECT", "variant == 'direct'"),
            ("VN", "min(vw, 16 // sizeof(dtype))"),
        ),
        default=Config.of({"wg": 64, "per_item": 1, "variant": "tile", "vw": 1}),
        reference=convolution_reference,
        split=(
            SplitDim(0, "n", (SplitArray("input"), SplitArray("output")), granule="per_item * vw"),
        ),
        doc="convolution with per_item runs of vw outputs per work-item (strided by the "
        "work-group; vw > 1 moves vectors) and a local-memory tile or direct loads.",
    )
