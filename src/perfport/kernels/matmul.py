"""Lawson's register-tiled matrix multiply (SYCL-DNN's matmul, Lawson 2020 section 3).

Each work-item computes a ``row_tile x col_tile`` tile of the output: per step it loads a
``row_tile x acc_tile`` tile of the left input and an ``acc_tile x col_tile`` tile of the right
input and accumulates their product. Tiles are compile-time (1, 2, 4, 8); the work-group is
one of the paper's ten (rows, cols) pairs: 64 x 10 = 640 configurations. Batched, with either
input optionally transposed.
"""

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

TILES = (1, 2, 4, 8)
WORK_GROUP_PAIRS: tuple[tuple[int, int], ...] = (
    (1, 64), (1, 128), (8, 8), (8, 16), (8, 32), (16, 8), (16, 16), (32, 8), (64, 1), (128, 1),
)  # fmt: skip
_WG_VALUES = tuple(sorted({v for pair in WORK_GROUP_PAIRS for v in pair}))

_SOURCE = r"""
// Register-tiled batched GEMM: out[b] = op(lhs[b]) * op(rhs[b]), op = optional transpose.
// Defines: ELEM, ROW_TILE, ACC_TILE, COL_TILE, TRANS_A, TRANS_B.
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

KERNEL void matmul(GLOBAL const ELEM* RESTRICT lhs_all, GLOBAL const ELEM* RESTRICT rhs_all,
                   GLOBAL ELEM* RESTRICT out_all, int M, int N, int K) {
    const long b = GID(2);
    GLOBAL const ELEM* lhs = lhs_all + b * M * K;
    GLOBAL const ELEM* rhs = rhs_all + b * K * N;
    GLOBAL ELEM* out = out_all + b * M * N;
    const int row0 = GID(1) * ROW_TILE, col0 = GID(0) * COL_TILE;
    if (row0 >= M || col0 >= N)
        return;
    ELEM acc[ROW_TILE][COL_TILE];
    for (int r = 0; r < ROW_TILE; ++r)
        for (int c = 0; c < COL_TILE; ++c)
            acc[r][c] = 0;
    for (int k0 = 0; k0 < K; k0 += ACC_TILE) {
        ELEM a[ROW_TILE][ACC_TILE];
        ELEM w[ACC_TILE][COL_TILE];
        for (int r = 0; r < ROW_TILE; ++r)
            for (int k = 0; k < ACC_TILE; ++k)
                a[r][k] = (row0 + r < M && k0 + k < K) ? LHS(row0 + r, k0 + k) : (ELEM)0;
        for (int k = 0; k < ACC_TILE; ++k)
            for (int c = 0; c < COL_TILE; ++c)
                w[k][c] = (k0 + k < K && col0 + c < N) ? RHS(k0 + k, col0 + c) : (ELEM)0;
        for (int r = 0; r < ROW_TILE; ++r)
            for (int k = 0; k < ACC_TILE; ++k)
                for (int c = 0; c < COL_TILE; ++c)
                    acc[r][c] += a[r][k] * w[k][c];
    }
    for (int r = 0; r < ROW_TILE; ++r)
        for (int c = 0; c < COL_TILE; ++c)
            if (row0 + r < M && col0 + c < N)
                out[(long)(row0 + r) * N + col0 + c] = acc[r][c];
}
"""


def matmul_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    m, n, k, batch = (int(p[x]) for x in ("M", "N", "K", "batch"))
    lhs = inputs["lhs"].astype(np.float64).reshape(batch, *((k, m) if p["trans_a"] else (m, k)))
    rhs = inputs["rhs"].astype(np.float64).reshape(batch, *((n, k) if p["trans_b"] else (k, n)))
    if p["trans_a"]:
        lhs = lhs.transpose(0, 2, 1)
    if p["trans_b"]:
        rhs = rhs.transpose(0, 2, 1)
    return {"out": np.matmul(lhs, rhs).astype(inputs["lhs"].dtype).reshape(-1)}


def matmul() -> KernelSpec:
    pairs = ", ".join(f"({r}, {c})" for r, c in WORK_GROUP_PAIRS)
    return KernelSpec(
        name="matmul",
        source=_SOURCE,
        entry="matmul",
        language=Language.PORTABLE,
        params=(
            Param("row_tile", TILES),
            Param("acc_tile", TILES),
            Param("col_tile", TILES),
            Param("wg_rows", _WG_VALUES, ParamKind.LAUNCH),
            Param("wg_cols", _WG_VALUES, ParamKind.LAUNCH),
        ),
        global_size=(
            "round_up(ceil_div(N, col_tile), wg_cols)",
            "round_up(ceil_div(M, row_tile), wg_rows)",
            "batch",
        ),
        local_size=("wg_cols", "wg_rows", "1"),
        args=(
            ArrayArg("lhs", "dtype", ("batch * M * K",)),
            ArrayArg("rhs", "dtype", ("batch * K * N",)),
            ArrayArg("out", "dtype", ("batch * M * N",), output=True),
            ScalarArg("M", "int", "M"),
            ScalarArg("N", "int", "N"),
            ScalarArg("K", "int", "K"),
        ),
        problem=Problem.of(
            M=256, N=256, K=256, batch=1, trans_a=False, trans_b=False, dtype="float"
        ),
        restrictions=(f"(wg_rows, wg_cols) in [{pairs}]",),
        defines=(
            ("ELEM", "ctype(dtype)"),
            ("ROW_TILE", "row_tile"),
            ("ACC_TILE", "acc_tile"),
            ("COL_TILE", "col_tile"),
            ("TRANS_A", "trans_a"),
            ("TRANS_B", "trans_b"),
        ),
        default=Config.of(
            {"row_tile": 4, "acc_tile": 4, "col_tile": 4, "wg_rows": 8, "wg_cols": 8}
        ),
        reference=matmul_reference,
        # Columns of the output (dimension 0) take columns of rhs; rows (1) rows of lhs.
        split=(
            SplitDim(
                0,
                "N",
                (
                    SplitArray(
                        "rhs",
                        "1 if trans_b else 2",
                        ("batch", "N if trans_b else K", "K if trans_b else N"),
                    ),
                    SplitArray("out", "2", ("batch", "M", "N")),
                ),
                granule="col_tile",
            ),
            SplitDim(
                1,
                "M",
                (
                    SplitArray(
                        "lhs",
                        "2 if trans_a else 1",
                        ("batch", "K if trans_a else M", "M if trans_a else K"),
                    ),
                    SplitArray("out", "1", ("batch", "M", "N")),
                ),
                granule="row_tile",
            ),
        ),
        doc="Lawson's register-tiled batched matmul (SYCL-DNN): tiles row x acc x col in "
        "{1,2,4,8}, ten work-group pairs; 640 configurations.",
    )
