"""A matrix multiply with local-memory tiles, register blocks and vector loads.

Lawson's ``matmul`` (``kernels/matmul.py``) gives each work-item a register tile and shares
nothing between work-items: every work-item reads its own rows and columns from global
memory. Its 640 configurations stay as they are, in that built-in, so the paper's data stays
reproducible. ``matmul_tiled`` is the classic scheme that reaches a GPU's arithmetic
throughput instead: a work-group stages a ``tile_m x tile_k`` block of the left input and a
``tile_k x tile_n`` block of the right one in local memory, and each of its
``(tile_m / wpt_m) x (tile_n / wpt_n)`` work-items accumulates a ``wpt_m x wpt_n`` block of
outputs in registers (rows and columns strided by the work-group, so stores coalesce). The
blocks are loaded ``vw`` elements at a time as vector loads (OpenCL ``vloadn``, CUDA
``float2``/``float4``), which needs untransposed inputs whose rows are a multiple of ``vw``.
Same problem values as ``matmul``: batched, either input optionally transposed.

``lvw`` (local read width) is how the inner loop reads the tiles. ``lvw=1`` is the kernel
as it was first written: one element at a time, lhs's tile transposed with a padded row, and
each work-item's columns ``tx + j * (tile_n / wpt_n)``. ``lvw=4`` reads 4 elements as one
vector from both tiles (LDS.128 on NVIDIA GPUs: a quarter of the local-memory instructions
per multiply-add): lhs's tile is kept untransposed with rows padded by 4 elements, and a
work-item's columns come in runs of 4 neighbours, runs ``4 * tile_n / wpt_n`` apart.
"""

from __future__ import annotations

from perfport._core import (
    ArrayArg,
    Config,
    KernelSpec,
    Language,
    LocalArg,
    Param,
    Problem,
    ScalarArg,
)
from perfport.kernels.matmul import matmul_reference

_SOURCE = r"""
// Batched GEMM with local-memory tiles: out[b] = op(lhs[b]) * op(rhs[b]). Defines: ELEM,
// TSM, TSN, TSK (tile sizes), WPTM, WPTN (outputs per work-item), VW (load width),
// LVW (local read width, 1 or 4), TRANS_A, TRANS_B.
#if TRANS_A
#define LHS(r, k) lhs[(long)(k) * M + (r)]
#else
#define LHS(r, k) lhs[(long)(r) * K + (k)]
#endif
#if TRANS_B
#define RHS(k, c) rhs[(long)(c) * K + (k)]
#else
#define RHS(k, c) rhs[(long)(k) * N + (c)]
#endif
#define RM (TSM / WPTM)
#define RN (TSN / WPTN)
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#if LVW > 1
// lhs's tile is stored as it is read, [TSM][TSK + 4], so that the inner loop reads LVW
// neighbouring k of a row as one vector; a pad of the widest vector (VW and LVW <= 4) keeps
// rows aligned for both the loads' stores and the reads, and moves each row to other banks.
// A work-item's columns come in runs of LVW, runs RN * LVW apart, so that neighbouring
// work-items read neighbouring vectors of rhs's tile.
#define AS_W (TSK + 4)
#define AS_SIZE (TSM * AS_W)
#define AS(r, k) as[(r) * AS_W + (k)]
#define COL(j) (tx * LVW + ((j) / LVW) * (RN * LVW) + (j) % LVW)
#define LVEC PASTE(ELEM, LVW)
#define LREAD(p) (*(LOCAL_PTR const LVEC*)(p))
#define LANES(dst, v) { (dst)[0] = (v).x; (dst)[1] = (v).y; (dst)[2] = (v).z; (dst)[3] = (v).w; }
#else
// lhs's tile is stored transposed; a padded row keeps the work-items that store one row of
// lhs (neighbouring k) off a single local-memory bank.
#define AS_W (TSM + 1)
#define AS_SIZE (TSK * AS_W)
#define AS(r, k) as[(k) * AS_W + (r)]
#define COL(j) (tx + (j) * RN)
#endif
#if VW > 1
#define VEC PASTE(ELEM, VW)
#ifdef __OPENCL_VERSION__
#define VLOAD(p) PASTE(vload, VW)(0, p)
#else
#define VLOAD(p) (*(const VEC*)(p))
#endif
// Writes a vector's lanes to dst[0], dst[stride], ...
#if VW == 2
#define SCATTER(dst, stride, v) { (dst)[0] = (v).x; (dst)[stride] = (v).y; }
#else
#define SCATTER(dst, stride, v) { (dst)[0] = (v).x; (dst)[stride] = (v).y; \
    (dst)[2 * (stride)] = (v).z; (dst)[3 * (stride)] = (v).w; }
#endif
#if LVW > 1
// Untransposed local rows are aligned to whole vectors: one vector store.
#define PUT_ROW(dst, v) (*(LOCAL_PTR VEC*)(dst) = (v));
#else
#define PUT_ROW(dst, v) SCATTER(dst, 1, v)
#endif
#endif

KERNEL void matmul(GLOBAL const ELEM* RESTRICT lhs_all, GLOBAL const ELEM* RESTRICT rhs_all,
                   GLOBAL ELEM* RESTRICT out_all, int M, int N, int K LOCAL_PARAM(ELEM, tiles)) {
    LOCAL_DECL(ELEM, tiles)
#if LVW > 1
    // A local buffer argument may be aligned only to its element (NVIDIA's OpenCL faulted on
    // vector accesses to it); the buffer has LVW elements more, to start on a whole vector.
    LOCAL_PTR ELEM* as = tiles + (sizeof(LVEC) - (size_t)tiles % sizeof(LVEC)) % sizeof(LVEC)
                                     / sizeof(ELEM);
#else
    LOCAL_PTR ELEM* as = tiles;            // see AS
#endif
    LOCAL_PTR ELEM* bs = as + AS_SIZE;  // [TSK][TSN]
    const long b = GID(2);
    GLOBAL const ELEM* lhs = lhs_all + b * M * K;
    GLOBAL const ELEM* rhs = rhs_all + b * K * N;
    GLOBAL ELEM* out = out_all + b * M * N;
    const int tx = LID(0), ty = LID(1), tid = ty * RN + tx;
    const int row0 = GROUP(1) * TSM, col0 = GROUP(0) * TSN;
    ELEM acc[WPTM][WPTN];
#pragma unroll
    for (int i = 0; i < WPTM; ++i)
#pragma unroll
        for (int j = 0; j < WPTN; ++j)
            acc[i][j] = 0;
    for (int k0 = 0; k0 < K; k0 += TSK) {
        // Neighbouring work-items load neighbouring elements of a row of lhs and of rhs.
        for (int id = tid; id < TSM * TSK / VW; id += RM * RN) {
            const int r = id / (TSK / VW), k = (id % (TSK / VW)) * VW;
            const int inside = row0 + r < M && k0 + k < K;
#if VW == 1
            AS(r, k) = inside ? LHS(row0 + r, k0 + k) : (ELEM)0;
#else
            if (inside) {
                const VEC v = VLOAD(&LHS(row0 + r, k0 + k));
#if LVW > 1
                PUT_ROW(&AS(r, k), v)
#else
                SCATTER(as + k * AS_W + r, AS_W, v)
#endif
            } else {
                for (int c = 0; c < VW; ++c)
                    AS(r, k + c) = 0;
            }
#endif
        }
        for (int id = tid; id < TSK * TSN / VW; id += RM * RN) {
            const int k = id / (TSN / VW), c = (id % (TSN / VW)) * VW;
            const int inside = k0 + k < K && col0 + c < N;
#if VW == 1
            bs[k * TSN + c] = inside ? RHS(k0 + k, col0 + c) : (ELEM)0;
#else
            if (inside) {
                const VEC v = VLOAD(&RHS(k0 + k, col0 + c));
                PUT_ROW(bs + k * TSN + c, v)
            } else {
                for (int j = 0; j < VW; ++j)
                    bs[k * TSN + c + j] = 0;
            }
#endif
        }
        BARRIER();
#if LVW > 1
#pragma unroll
        for (int k = 0; k < TSK; k += LVW) {
            ELEM a[WPTM][LVW], w[LVW][WPTN];
#pragma unroll
            for (int i = 0; i < WPTM; ++i) {
                const LVEC v = LREAD(&AS(ty + i * RM, k));
                LANES(a[i], v)
            }
#pragma unroll
            for (int q = 0; q < LVW; ++q)
#pragma unroll
                for (int j = 0; j < WPTN; j += LVW) {
                    const LVEC v = LREAD(bs + (k + q) * TSN + COL(j));
                    LANES(w[q] + j, v)
                }
#pragma unroll
            for (int q = 0; q < LVW; ++q)
#pragma unroll
                for (int i = 0; i < WPTM; ++i)
#pragma unroll
                    for (int j = 0; j < WPTN; ++j)
                        acc[i][j] += a[i][q] * w[q][j];
        }
#else
#pragma unroll
        for (int k = 0; k < TSK; ++k) {
            ELEM a[WPTM], w[WPTN];
#pragma unroll
            for (int i = 0; i < WPTM; ++i)
                a[i] = as[k * AS_W + ty + i * RM];
#pragma unroll
            for (int j = 0; j < WPTN; ++j)
                w[j] = bs[k * TSN + tx + j * RN];
#pragma unroll
            for (int i = 0; i < WPTM; ++i)
#pragma unroll
                for (int j = 0; j < WPTN; ++j)
                    acc[i][j] += a[i] * w[j];
        }
#endif
        BARRIER();
    }
#pragma unroll
    for (int i = 0; i < WPTM; ++i)
#pragma unroll
        for (int j = 0; j < WPTN; ++j) {
            const int r = row0 + ty + i * RM, c = col0 + COL(j);
            if (r < M && c < N)
                out[(long)r * N + c] = acc[i][j];
        }
}
"""

TILE_MN: tuple[int, ...] = (16, 32, 64, 128)
TILE_K: tuple[int, ...] = (8, 16, 32)
WORK_PER_ITEM: tuple[int, ...] = (1, 2, 4, 8)
VECTOR_WIDTHS: tuple[int, ...] = (1, 2, 4)
# 4 is a 16-byte read of floats; 2 would add as many configurations again for less.
LOCAL_READ_WIDTHS: tuple[int, ...] = (1, 4)


def matmul_tiled() -> KernelSpec:
    return KernelSpec(
        name="matmul_tiled",
        source=_SOURCE,
        entry="matmul",
        language=Language.PORTABLE,
        params=(
            Param("tile_m", TILE_MN, define="TSM"),
            Param("tile_n", TILE_MN, define="TSN"),
            Param("tile_k", TILE_K, define="TSK"),
            Param("wpt_m", WORK_PER_ITEM, define="WPTM"),
            Param("wpt_n", WORK_PER_ITEM, define="WPTN"),
            Param("vw", VECTOR_WIDTHS, define="VW"),
            Param("lvw", LOCAL_READ_WIDTHS, define="LVW"),
        ),
        derived=(("wg_m", "tile_m // wpt_m"), ("wg_n", "tile_n // wpt_n")),
        global_size=("ceil_div(N, tile_n) * wg_n", "ceil_div(M, tile_m) * wg_m", "batch"),
        local_size=("wg_n", "wg_m", "1"),
        args=(
            ArrayArg("lhs", "dtype", ("batch * M * K",)),
            ArrayArg("rhs", "dtype", ("batch * K * N",)),
            ArrayArg("out", "dtype", ("batch * M * N",), output=True),
            ScalarArg("M", "int", "M"),
            ScalarArg("N", "int", "N"),
            ScalarArg("K", "int", "K"),
            LocalArg(
                "tiles",
                "dtype",
                "tile_k * (tile_m + 1 + tile_n) if lvw == 1 "
                "else tile_m * (tile_k + 4) + tile_k * tile_n + lvw",
            ),
        ),
        problem=Problem.of(
            M=256, N=256, K=256, batch=1, trans_a=False, trans_b=False, dtype="float"
        ),
        # Vector loads read rows of untransposed inputs, aligned when rows are whole vectors.
        restrictions=(
            "vw == 1 or (not trans_a and not trans_b and K % vw == 0 and N % vw == 0)",
            # A work-item's columns are whole runs of lvw; a k-step reads whole vectors.
            "lvw == 1 or (wpt_n % lvw == 0 and tile_k % lvw == 0)",
        ),
        defines=(("ELEM", "ctype(dtype)"), ("TRANS_A", "trans_a"), ("TRANS_B", "trans_b")),
        default=Config.of(
            {"tile_m": 64, "tile_n": 64, "tile_k": 16, "wpt_m": 4, "wpt_n": 4, "vw": 1, "lvw": 1}
        ),
        reference=matmul_reference,
        doc="batched matmul with local-memory tiles tile_m x tile_k and tile_k x tile_n, "
        "wpt_m x wpt_n outputs per work-item, vector loads of width vw and vector reads of "
        "the local tiles of width lvw.",
    )
