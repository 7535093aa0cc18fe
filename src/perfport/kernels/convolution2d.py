"""A tiled 2D convolution over the tuning space of the benchmark hub's ``convolution_milo``.

The space is the one the FAIR benchmark hub brute-forced on the A100, A4000 and MI250X
(``../shared/data/kerneltuner-benchmark_hub``: its parameters and conditions, 4,362
configurations for a 15x15 filter): work-group ``block_size_x`` x ``block_size_y``, each
work-item computing ``tile_size_x`` x ``tile_size_y`` outputs, the input staged in local memory
or not (``use_shmem``), local-memory rows padded or not (``use_padding``), the input read through
the read-only cache or not (``read_only``). The filter always sits in constant memory (the hub's
``use_cmem`` takes only the value 1). The code is perfport's own, written from that description,
so its timings show how a GPU rates these configurations for this algorithm, not for the hub's
exact source. Measuring it on a new GPU and exporting a Kernel Tuner cache
(``perfport export --format kt-cache``) adds that GPU to ``perfport select portable``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from perfport._core import ArrayArg, Config, KernelSpec, Language, Param, Problem

_SOURCE = r"""
// out[y][x] = sum over i < filter_height, j < filter_width of in[y + i][x + j] * filter[i][j],
// on a (HEIGHT + filter_height - 1) x (WIDTH + filter_width - 1) input. A work-group computes
// (block_size_y * tile_size_y) x (block_size_x * tile_size_x) outputs; each work-item computes
// tile_size_y x tile_size_x of them, strided by the work-group size so that neighbouring
// work-items read neighbouring addresses.
#define IN_W (WIDTH + filter_width - 1)
#define IN_H (HEIGHT + filter_height - 1)
#define OUT_W (block_size_x * tile_size_x)
#define OUT_H (block_size_y * tile_size_y)
#define SH_W0 (OUT_W + filter_width - 1)
#define SH_H (OUT_H + filter_height - 1)
#if use_padding
// Rows congruent to block_size_x modulo 32 words: a warp that spans two rows of the
// work-group (block_size_x not a multiple of 32) then reads 32 consecutive banks.
#define SH_W (SH_W0 + ((block_size_x - SH_W0) % 32 + 32) % 32)
#else
#define SH_W SH_W0
#endif
#if READ_ONLY
#define LOAD_IN(i) LDG(input + (i))
#else
#define LOAD_IN(i) input[i]
#endif

CONSTANT_DECL(float, filter, filter_width * filter_height)

KERNEL void convolution2d(GLOBAL float* RESTRICT output, GLOBAL const float* RESTRICT input
                          CONSTANT_PARAM(float, filter)) {
    const int tx = LID(0), ty = LID(1);
    const int x0 = GROUP(0) * OUT_W, y0 = GROUP(1) * OUT_H;
    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j)
            sum[i][j] = 0.0f;
#if use_shmem
    LOCAL float tile[SH_H * SH_W];
    for (int i = ty; i < SH_H; i += block_size_y)
        for (int j = tx; j < SH_W0; j += block_size_x)
            tile[i * SH_W + j] = LOAD_IN(min(y0 + i, IN_H - 1) * IN_W + min(x0 + j, IN_W - 1));
    BARRIER();
#endif
#pragma unroll
    for (int fy = 0; fy < filter_height; ++fy) {
#pragma unroll
        for (int fx = 0; fx < filter_width; ++fx) {
            const float f = filter[fy * filter_width + fx];
#pragma unroll
            for (int i = 0; i < tile_size_y; ++i) {
#pragma unroll
                for (int j = 0; j < tile_size_x; ++j) {
#if use_shmem
                    sum[i][j] += tile[(ty + i * block_size_y + fy) * SH_W
                                      + tx + j * block_size_x + fx] * f;
#else
                    // Clamped: work-items past the edge compute a throw-away value.
                    const int y = min(y0 + ty + i * block_size_y, HEIGHT - 1) + fy;
                    const int x = min(x0 + tx + j * block_size_x, WIDTH - 1) + fx;
                    sum[i][j] += LOAD_IN(y * IN_W + x) * f;
#endif
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < tile_size_y; ++i) {
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j) {
            const int y = y0 + ty + i * block_size_y, x = x0 + tx + j * block_size_x;
            if (y < HEIGHT && x < WIDTH)
                output[y * WIDTH + x] = sum[i][j];
        }
    }
}
"""

# The hub's convolution_milo conditions, in its words (filter_width/height are problem values
# here, since array shapes depend on them).
_RESTRICTIONS = (
    "use_padding == 0 or block_size_x % 32 != 0",
    "block_size_x * block_size_y <= 1024",
    "use_padding == 0 or use_shmem != 0",
    "use_shmem == 0 or (block_size_x * tile_size_x + filter_width - 1)"
    " * (block_size_y * tile_size_y + filter_height - 1) < 12 * 1024",
)


def convolution2d_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    h, w = int(p["height"]), int(p["width"])
    fh, fw = int(p["filter_height"]), int(p["filter_width"])
    image = inputs["input"].astype(np.float64).reshape(h + fh - 1, w + fw - 1)
    weights = inputs["filter"].astype(np.float64).reshape(fh, fw)
    out = np.zeros((h, w))
    for i in range(fh):
        for j in range(fw):
            out += weights[i, j] * image[i : i + h, j : j + w]
    return {"output": out.astype(np.float32).ravel()}


def convolution2d() -> KernelSpec:
    return KernelSpec(
        name="convolution2d",
        source=_SOURCE,
        entry="convolution2d",
        language=Language.PORTABLE,
        params=(
            Param("block_size_x", tuple(range(16, 257, 16))),
            Param("block_size_y", (1, 2, 4, 8, 16)),
            Param("tile_size_x", (1, 2, 3, 4)),
            Param("tile_size_y", (1, 2, 3, 4)),
            Param("read_only", (0, 1), define="READ_ONLY"),  # an OpenCL C keyword
            Param("use_padding", (0, 1)),
            Param("use_shmem", (0, 1)),
        ),
        derived=(
            ("sh_w0", "block_size_x * tile_size_x + filter_width - 1"),
            ("sh_w", "sh_w0 + ((block_size_x - sh_w0) % 32 if use_padding else 0)"),
            ("sh_h", "block_size_y * tile_size_y + filter_height - 1"),
        ),
        global_size=(
            "ceil_div(width, block_size_x * tile_size_x) * block_size_x",
            "ceil_div(height, block_size_y * tile_size_y) * block_size_y",
        ),
        local_size=("block_size_x", "block_size_y"),
        args=(
            ArrayArg("output", "float", ("height * width",), output=True),
            ArrayArg(
                "input", "float", ("(height + filter_height - 1) * (width + filter_width - 1)",)
            ),
            ArrayArg("filter", "float", ("filter_height * filter_width",), constant=True),
        ),
        problem=Problem.of(width=4096, height=4096, filter_width=15, filter_height=15),
        restrictions=_RESTRICTIONS,
        defines=(
            ("WIDTH", "width"),
            ("HEIGHT", "height"),
            ("filter_width", "filter_width"),
            ("filter_height", "filter_height"),
        ),
        local_mem="4 * sh_w * sh_h if use_shmem else 0",
        default=Config.of(
            {
                "block_size_x": 16,
                "block_size_y": 16,
                "tile_size_x": 1,
                "tile_size_y": 1,
                "read_only": 0,
                "use_padding": 1,
                "use_shmem": 1,
            }
        ),
        reference=convolution2d_reference,
        doc="2D convolution over the benchmark hub's convolution_milo space (filter in constant memory).",
    )
