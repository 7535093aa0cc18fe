"""SkelCL-style stencils with work per work-item and a direct-load variant.

The built-in ``stencil`` (``kernels/stencil.py``) tunes only the work-group: each work-item
updates one cell from a local-memory tile. That is the kernel Cummins et al. studied, so it
stays as it is (its source, and so its stored results, keep their identity). On a GPU it
leaves memory bandwidth unused: one cell per work-item gives too little work to hide the
latency, and staging the tile costs a barrier and a second pass through memory.

``stencil_wide`` is the same computation with four more tunables:

- ``rows``: consecutive rows each work-item updates (1, 2, 4, 8);
- ``vw``: adjacent columns each work-item updates, a run as wide as a float vector
  (1, 2, 4, 8); any width works, the last run of a row is guarded;
- ``variant``: ``tile`` stages the work-group's block and its halo in local memory (the old
  kernel's scheme), ``direct`` reads neighbours from global memory through the caches
  (unclamped inside the matrix, clamped or padded at its borders);
- ``access``: ``scalar`` moves each cell on its own, ``vector`` moves each run of ``vw`` cells
  as vectors of up to 16 bytes (``float4``, ``double2``; OpenCL and CUDA alike), so that a
  work-item issues 8- or 16-byte transactions. Where every row starts on a vector boundary
  (``width`` a multiple of the vector's elements) the accesses are aligned vector loads and
  stores; otherwise OpenCL's ``vloadn``/``vstoren`` and element accesses on CUDA. The direct
  variant then holds the runs' rows and borders in registers, each input row loaded once.

``rows=1 vw=1 variant=tile access=scalar`` is exactly the old kernel's work per work-item, and
its default; ``access=scalar`` keeps every configuration from before ``access`` existed.
``VECTOR_RULES`` restrict ``access=vector`` to where it can be fast (module constant).
"""

from __future__ import annotations

from collections.abc import Mapping

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
from perfport._core.dtypes import DTYPE_NAMES, numpy_dtype
from perfport.kernels.stencil import (
    BORDERS,
    BOX_MEAN_C,
    OUT_DTYPE,
    WG_VALUES,
    NumpyFunction,
    StencilReference,
    box_mean_numpy,
    stencil_defines,
)

WORK_VALUES: tuple[int, ...] = (1, 2, 4, 8)
VARIANTS: tuple[str, ...] = ("tile", "direct")
ACCESSES: tuple[str, ...] = ("scalar", "vector")
# Element types of 4 or 8 bytes, by C and numpy name.
WIDE_TYPES: tuple[str, ...] = tuple(t for t in DTYPE_NAMES if numpy_dtype(t).itemsize >= 4)
# Vector accesses only where they differ from scalar ones and can pay: runs of two or more
# cells; elements of 4 or 8 bytes (vectors of 2- or 1-byte elements have no 4-wide CUDA
# type worth it); a direct variant's register window of at most 256 cells (more spills).
VECTOR_RULES: tuple[str, ...] = (
    "access == 'scalar' or vw > 1",
    f"access == 'scalar' or dtype in {WIDE_TYPES}",
    f"access == 'scalar' or out_dtype in {('same', *WIDE_TYPES)}",
    "access == 'scalar' or variant == 'tile' or (rows + north + south) * (vw + west + east) <= 256",
)

_SOURCE = r"""
// Stencil with ROWS x VW cells per work-item. Defines: ELEM, OUT, NORTH, SOUTH, EAST, WEST,
// NEAREST, PAD, ROWS, VW, DIRECT (1: neighbours from global memory, 0: a local-memory tile),
// VEC (1: each run of VW cells moves as vectors of VN inputs or OUT_VN outputs), ALIGNED and
// OUT_ALIGNED (every row starts on a vector boundary, so a run is aligned vector accesses).
DEVICE_FN ELEM load_cell(GLOBAL const ELEM* in, int x, int y, int width, int height) {
#if NEAREST
    x = min(max(x, 0), width - 1);
    y = min(max(y, 0), height - 1);
    return in[y * width + x];
#else
    return (x < 0 || y < 0 || x >= width || y >= height) ? (ELEM)(PAD) : in[y * width + x];
#endif
}

// The customising function three times: over the tile, over the input inside the matrix
// (no clamping, so neighbouring cells share loads) and over the input at its borders.
#define GET(dx, dy) src[(cy + (dy)) * stride + cx + (dx)]
DEVICE_FN OUT cell_local(LOCAL_PTR const ELEM* src, int stride, int cx, int cy) {
USER_FUNCTION_BODY
}
DEVICE_FN OUT cell_inside(GLOBAL const ELEM* RESTRICT src, int stride, int cx, int cy) {
USER_FUNCTION_BODY
}
#undef GET
#define GET(dx, dy) load_cell(src, cx + (dx), cy + (dy), stride, height)
DEVICE_FN OUT cell_edge(GLOBAL const ELEM* RESTRICT src, int stride, int height, int cx, int cy) {
USER_FUNCTION_BODY
}
#undef GET

#if VEC
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#define VT PASTE(ELEM, VN)
#define OVT PASTE(OUT, OUT_VN)
#define WIN_W (WEST + VW + EAST)
// A fourth time over a window of registers: the work-item's runs and their borders.
#define GET(dx, dy) win[cy + (dy)][cx + (dx)]
DEVICE_FN OUT cell_window(ELEM win[][WIN_W], int cx, int cy) {
USER_FUNCTION_BODY
}
#undef GET

// VW cells from p: aligned vector loads where rows start on a vector boundary, else OpenCL's
// vloadn (element alignment suffices) or element loads (CUDA).
DEVICE_FN void load_run(ELEM* dst, GLOBAL const ELEM* RESTRICT p) {
#pragma unroll
    for (int k = 0; k < VW / VN; ++k) {
#if ALIGNED || defined(__OPENCL_VERSION__)
#if ALIGNED
        const VT v = ((GLOBAL const VT*)p)[k];
#else
        const VT v = PASTE(vload, VN)(k, p);
#endif
        dst[k * VN] = v.x;
        dst[k * VN + 1] = v.y;
#if VN == 4
        dst[k * VN + 2] = v.z;
        dst[k * VN + 3] = v.w;
#endif
#else
        for (int j = 0; j < VN; ++j)
            dst[k * VN + j] = p[k * VN + j];
#endif
    }
}

DEVICE_FN void store_run(GLOBAL OUT* RESTRICT p, const OUT* src) {
#pragma unroll
    for (int k = 0; k < VW / OUT_VN; ++k) {
#if OUT_ALIGNED || defined(__OPENCL_VERSION__)
        OVT v;
        v.x = src[k * OUT_VN];
        v.y = src[k * OUT_VN + 1];
#if OUT_VN == 4
        v.z = src[k * OUT_VN + 2];
        v.w = src[k * OUT_VN + 3];
#endif
#if OUT_ALIGNED
        ((GLOBAL OVT*)p)[k] = v;
#else
        PASTE(vstore, OUT_VN)(v, k, p);
#endif
#else
        for (int j = 0; j < OUT_VN; ++j)
            p[k * OUT_VN + j] = src[k * OUT_VN + j];
#endif
    }
}

// Direct loads for a whole run (x + VW <= width, y + ROWS <= height), inside the matrix or at
// its border: the ROWS + NORTH + SOUTH input rows of the runs and their borders, each loaded
// once into registers, then each output run stored at once. Rows and border columns outside
// the matrix are read clamped to it and, with padding, replaced by PAD, so border work-items
// take this path too: a warp split into a scalar border path cost an H200 2 points of a copy's
// bandwidth at 4096^2 (experiments/2026-11-26-stencil-persist).
DEVICE_FN void direct_vector(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width,
                             int height, int x, int y) {
    ELEM win[ROWS + NORTH + SOUTH][WIN_W];
#pragma unroll
    for (int r = 0; r < ROWS + NORTH + SOUTH; ++r) {
        const int gy = y - NORTH + r;
        GLOBAL const ELEM* row = in + min(max(gy, 0), height - 1) * width;
#pragma unroll
        for (int k = 0; k < WEST; ++k)
            win[r][k] = row[max(x - WEST + k, 0)];
        load_run(win[r] + WEST, row + x);
#pragma unroll
        for (int k = 0; k < EAST; ++k)
            win[r][WEST + VW + k] = row[min(x + VW + k, width - 1)];
#if !NEAREST
#pragma unroll
        for (int k = 0; k < WIN_W; ++k)
            if (gy < 0 || gy >= height || x - WEST + k < 0 || x - WEST + k >= width)
                win[r][k] = (ELEM)(PAD);
#endif
    }
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        OUT res[VW];
#pragma unroll
        for (int j = 0; j < VW; ++j)
            res[j] = cell_window(win, WEST + j, NORTH + i);
        store_run(out + (y + i) * width + x, res);
    }
}

// The tile's middle columns, a run per work-item slot, as vectors where the run lies in the
// matrix (runs start on vector boundaries); its WEST and EAST columns one cell at a time.
DEVICE_FN void fill_tile_vector(GLOBAL const ELEM* RESTRICT in, LOCAL_PTR ELEM* tile, int width,
                                int height, int x0, int y0, int tile_w, int tile_h) {
    const int lx = LID(0), ly = LID(1), wc = LSIZE(0), wr = LSIZE(1);
    for (int i = ly * wc + lx; i < wc * tile_h; i += wc * wr) {
        const int r = i / wc, c = WEST + (i % wc) * VW, gx = x0 + c, gy = y0 + r;
        LOCAL_PTR ELEM* dst = tile + r * tile_w + c;
        if (gy >= 0 && gy < height && gx + VW <= width) {
            ELEM run[VW];
            load_run(run, in + gy * width + gx);
#pragma unroll
            for (int j = 0; j < VW; ++j)
                dst[j] = run[j];
        } else {
            for (int j = 0; j < VW; ++j)
                dst[j] = load_cell(in, gx + j, gy, width, height);
        }
    }
#if WEST + EAST > 0
    for (int i = ly * wc + lx; i < (WEST + EAST) * tile_h; i += wc * wr) {
        const int r = i / (WEST + EAST), k = i % (WEST + EAST);
        const int c = k < WEST ? k : wc * VW + k;
        tile[r * tile_w + c] = load_cell(in, x0 + c, y0 + r, width, height);
    }
#endif
}
#endif

KERNEL void stencil(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width, int height
                    LOCAL_PARAM(ELEM, tile)) {
    const int x = GID(0) * VW, y = GID(1) * ROWS;  // this work-item's first cell
#if DIRECT
#if VEC
    if (x + VW <= width && y + ROWS <= height) {  // every whole run, at a border or not
        direct_vector(in, out, width, height, x, y);
        return;
    }
#else
    if (x >= WEST && y >= NORTH && x + VW - 1 + EAST < width && y + ROWS - 1 + SOUTH < height) {
        for (int i = 0; i < ROWS; ++i)
            for (int j = 0; j < VW; ++j)
                out[(y + i) * width + x + j] = cell_inside(in, width, x + j, y + i);
        return;
    }
#endif
    for (int i = 0; i < ROWS; ++i)  // the cells of a run cut by the matrix's edge
        for (int j = 0; j < VW; ++j)
            if (x + j < width && y + i < height)
                out[(y + i) * width + x + j] = cell_edge(in, width, height, x + j, y + i);
#else
    LOCAL_DECL(ELEM, tile)
    const int lx = LID(0), ly = LID(1), wc = LSIZE(0), wr = LSIZE(1);
    const int tile_w = wc * VW + WEST + EAST, tile_h = wr * ROWS + NORTH + SOUTH;
    const int x0 = GROUP(0) * wc * VW - WEST, y0 = GROUP(1) * wr * ROWS - NORTH;
#if VEC
    fill_tile_vector(in, tile, width, height, x0, y0, tile_w, tile_h);
#else
    for (int i = ly * wc + lx; i < tile_w * tile_h; i += wc * wr)
        tile[i] = load_cell(in, x0 + i % tile_w, y0 + i / tile_w, width, height);
#endif
    BARRIER();
#if VEC
    if (x + VW <= width) {
        for (int i = 0; i < ROWS && y + i < height; ++i) {
            OUT res[VW];
#pragma unroll
            for (int j = 0; j < VW; ++j)
                res[j] = cell_local(tile, tile_w, lx * VW + j + WEST, ly * ROWS + i + NORTH);
            store_run(out + (y + i) * width + x, res);
        }
        return;
    }
#endif
    for (int i = 0; i < ROWS; ++i)
        for (int j = 0; j < VW; ++j)
            if (x + j < width && y + i < height)
                out[(y + i) * width + x + j] =
                    cell_local(tile, tile_w, lx * VW + j + WEST, ly * ROWS + i + NORTH);
#endif
}
"""


def vector_defines(dtype: str, lanes: str, aligned: str) -> tuple[tuple[str, str], ...]:
    """Elements per vector access of ``dtype`` (up to 16 bytes, at most ``vw``), and whether
    every row of the matrix starts on a vector boundary."""
    count = f"min(vw, 16 // sizeof({dtype}))"
    return ((lanes, count), (aligned, f"width % {count} == 0"))


def make_wide_stencil(
    name: str,
    c_body: str,
    numpy_function: NumpyFunction | None,
    *,
    problem: Mapping[str, object] | None = None,
    doc: str = "",
) -> KernelSpec:
    """A stencil from its customising function (as for ``make_stencil``: a C body reading
    ``GET(dx, dy)`` and its numpy twin) that tunes the work-group ``wc`` x ``wr``, the cells
    per work-item ``rows`` x ``vw``, the ``variant`` (``tile`` or ``direct``) and the
    ``access`` (``scalar`` or ``vector``). The problem
    values are ``make_stencil``'s, with the border sizes ``north``, ``south``, ``east``,
    ``west`` (1 by default)."""
    defaults: dict[str, object] = {
        "width": 512, "height": 512, "north": 1, "south": 1, "east": 1, "west": 1,
        "dtype": "float", "out_dtype": "same", "boundary": "nearest", "pad": 0,
    }  # fmt: skip
    defaults.update(problem or {})
    n, s, e, w = BORDERS
    tile_cells = f"(wc * vw + {w} + {e}) * (wr * rows + {n} + {s})"
    return KernelSpec(
        name=name,
        source=_SOURCE.replace("USER_FUNCTION_BODY", c_body.strip("\n")),
        entry="stencil",
        language=Language.PORTABLE,
        params=(
            Param("wc", WG_VALUES, ParamKind.LAUNCH),
            Param("wr", WG_VALUES, ParamKind.LAUNCH),
            Param("rows", WORK_VALUES, define="ROWS"),
            Param("vw", WORK_VALUES, define="VW"),
            Param("variant", VARIANTS, define="STENCIL_VARIANT"),
            Param("access", ACCESSES, define="STENCIL_ACCESS"),
        ),
        global_size=("round_up(ceil_div(width, vw), wc)", "round_up(ceil_div(height, rows), wr)"),
        local_size=("wc", "wr"),
        args=(
            ArrayArg("input", "dtype", ("height", "width")),
            ArrayArg("output", OUT_DTYPE, ("height", "width"), output=True),
            ScalarArg("width", "int", "width"),
            ScalarArg("height", "int", "height"),
            # The direct variant stages nothing; one element keeps the argument list fixed.
            LocalArg("tile", "dtype", f"{tile_cells} if variant == 'tile' else 1"),
        ),
        problem=Problem.of(defaults),
        restrictions=("boundary in ('nearest', 'pad')", *VECTOR_RULES),
        defines=(
            *stencil_defines(n, s, e, w),
            ("DIRECT", "variant == 'direct'"),
            ("VEC", "access == 'vector'"),
            *vector_defines("dtype", "VN", "ALIGNED"),
            *vector_defines(OUT_DTYPE, "OUT_VN", "OUT_ALIGNED"),
        ),
        # The old kernel's choice and work per work-item: the same kernel as stencil's w(32x4).
        default=Config.of(
            {"wc": 32, "wr": 4, "rows": 1, "vw": 1, "variant": "tile", "access": "scalar"}
        ),
        reference=None if numpy_function is None else StencilReference(numpy_function, BORDERS),
        # As stencil's: columns (dimension 0) or rows (1), with the neighbours' border cells.
        split=(
            SplitDim(
                0,
                "width",
                (SplitArray("input", "1"), SplitArray("output", "1")),
                granule="vw",
                halo=(w, e),
                feeds=(("output", "input"),),
            ),
            SplitDim(
                1,
                "height",
                (SplitArray("input", "0"), SplitArray("output", "0")),
                granule="rows",
                halo=(n, s),
                feeds=(("output", "input"),),
            ),
        ),
        doc=doc,
    )


def stencil_wide() -> KernelSpec:
    """The built-in stencil's box mean with rows and columns per work-item and a direct-load
    variant beside the local-memory tile."""
    return make_wide_stencil(
        "stencil_wide",
        BOX_MEAN_C,
        box_mean_numpy,
        doc="stencil's box mean, tuning the work-group wc x wr, rows x vw cells per work-item "
        "and the variant: a local-memory tile or direct loads.",
    )
