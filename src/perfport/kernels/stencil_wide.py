"""SkelCL-style stencils with work per work-item and a direct-load variant.

The built-in ``stencil`` (``kernels/stencil.py``) tunes only the work-group: each work-item
updates one cell from a local-memory tile. That is the kernel Cummins et al. studied, so it
stays as it is (its source, and so its stored results, keep their identity). On a GPU it
leaves memory bandwidth unused: one cell per work-item gives too little work to hide the
latency, and staging the tile costs a barrier and a second pass through memory.

``stencil_wide`` is the same computation with three more tunables:

- ``rows``: consecutive rows each work-item updates (1, 2, 4, 8);
- ``vw``: adjacent columns each work-item updates, a run as wide as a float vector
  (1, 2, 4, 8); any width works, the last run of a row is guarded;
- ``variant``: ``tile`` stages the work-group's block and its halo in local memory (the old
  kernel's scheme), ``direct`` reads neighbours from global memory through the caches
  (unclamped inside the matrix, clamped or padded at its borders).

``rows=1 vw=1 variant=tile`` is exactly the old kernel's work per work-item, and its default.
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

_SOURCE = r"""
// Stencil with ROWS x VW cells per work-item. Defines: ELEM, OUT, NORTH, SOUTH, EAST, WEST,
// NEAREST, PAD, ROWS, VW, DIRECT (1: neighbours from global memory, 0: a local-memory tile).
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

KERNEL void stencil(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width, int height
                    LOCAL_PARAM(ELEM, tile)) {
    const int x = GID(0) * VW, y = GID(1) * ROWS;  // this work-item's first cell
#if DIRECT
    const int inside = x >= WEST && y >= NORTH && x + VW - 1 + EAST < width
                       && y + ROWS - 1 + SOUTH < height;
    if (inside) {
        for (int i = 0; i < ROWS; ++i)
            for (int j = 0; j < VW; ++j)
                out[(y + i) * width + x + j] = cell_inside(in, width, x + j, y + i);
    } else {
        for (int i = 0; i < ROWS; ++i)
            for (int j = 0; j < VW; ++j)
                if (x + j < width && y + i < height)
                    out[(y + i) * width + x + j] = cell_edge(in, width, height, x + j, y + i);
    }
#else
    LOCAL_DECL(ELEM, tile)
    const int lx = LID(0), ly = LID(1), wc = LSIZE(0), wr = LSIZE(1);
    const int tile_w = wc * VW + WEST + EAST, tile_h = wr * ROWS + NORTH + SOUTH;
    const int x0 = GROUP(0) * wc * VW - WEST, y0 = GROUP(1) * wr * ROWS - NORTH;
    for (int i = ly * wc + lx; i < tile_w * tile_h; i += wc * wr)
        tile[i] = load_cell(in, x0 + i % tile_w, y0 + i / tile_w, width, height);
    BARRIER();
    for (int i = 0; i < ROWS; ++i)
        for (int j = 0; j < VW; ++j)
            if (x + j < width && y + i < height)
                out[(y + i) * width + x + j] =
                    cell_local(tile, tile_w, lx * VW + j + WEST, ly * ROWS + i + NORTH);
#endif
}
"""


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
    per work-item ``rows`` x ``vw`` and the ``variant`` (``tile`` or ``direct``). The problem
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
        restrictions=("boundary in ('nearest', 'pad')",),
        defines=(*stencil_defines(n, s, e, w), ("DIRECT", "variant == 'direct'")),
        # The old kernel's choice and work per work-item: the same kernel as stencil's w(32x4).
        default=Config.of({"wc": 32, "wr": 4, "rows": 1, "vw": 1, "variant": "tile"}),
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
