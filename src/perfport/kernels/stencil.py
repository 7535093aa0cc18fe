"""SkelCL-style 2D stencils (Cummins et al. 2016, section 2).

Each work-item updates one cell from its value and a border region of ``north``/``south``
rows and ``west``/``east`` columns around it. A work-group of ``wc x wr`` work-items first
copies its tile plus the halo, ``(wr + north + south) x (wc + west + east)`` cells, into local
memory, so the work-group size sets both the parallel shape and the local-memory footprint.
Cells outside the matrix read the nearest cell (``boundary='nearest'``) or ``pad``.

A stencil is defined by its customising function, written twice: as a C body that reads
neighbours with ``GET(dx, dy)`` (dx east, dy south) and returns the new value, and as a numpy
function that receives ``get(dx, dy)`` (the whole shifted matrix) and returns the new matrix.
Input and output element types are the problem values ``dtype`` and ``out_dtype`` ('same' by
default); in C they are ``ELEM`` and ``OUT``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np

from perfport._core import (
    ArrayArg,
    Config,
    Expr,
    Init,
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
from perfport._core.dtypes import numpy_dtype

# Cummins' pilot grid (4, 8, 16, 24, ..., 96) plus the other powers of two up to 1024.
WG_VALUES: tuple[int, ...] = tuple(sorted({1, 2, 4, *range(8, 97, 8), 128, 256, 512, 1024}))
OUT_DTYPE = "dtype if out_dtype == 'same' else out_dtype"

_SOURCE = r"""
// SkelCL-style stencil. Defines: ELEM (input type), OUT (output type), NORTH, SOUTH, EAST,
// WEST, NEAREST (1: nearest cell, 0: the PAD value outside the matrix), PAD.
DEVICE_FN ELEM load_cell(GLOBAL const ELEM* in, int x, int y, int width, int height) {
#if NEAREST
    x = min(max(x, 0), width - 1);
    y = min(max(y, 0), height - 1);
    return in[y * width + x];
#else
    return (x < 0 || y < 0 || x >= width || y >= height) ? (ELEM)(PAD) : in[y * width + x];
#endif
}

#define GET(dx, dy) tile[(ly + NORTH + (dy)) * tile_w + (lx + WEST + (dx))]
DEVICE_FN OUT user_function(LOCAL_PTR const ELEM* tile, int tile_w, int lx, int ly) {
USER_FUNCTION_BODY
}
#undef GET

KERNEL void stencil(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width, int height
                    LOCAL_PARAM(ELEM, tile)) {
    LOCAL_DECL(ELEM, tile)
    const int lx = LID(0), ly = LID(1), wc = LSIZE(0), wr = LSIZE(1);
    const int tile_w = wc + WEST + EAST, tile_h = wr + NORTH + SOUTH;
    const int x0 = GROUP(0) * wc - WEST, y0 = GROUP(1) * wr - NORTH;
    for (int i = ly * wc + lx; i < tile_w * tile_h; i += wc * wr)
        tile[i] = load_cell(in, x0 + i % tile_w, y0 + i / tile_w, width, height);
    BARRIER();
    const int x = GID(0), y = GID(1);
    if (x < width && y < height)
        out[y * width + x] = user_function(tile, tile_w, lx, ly);
}
"""

Shifted = Callable[[int, int], np.ndarray]
NumpyFunction = Callable[[Shifted, Problem], np.ndarray]
BORDERS = ("north", "south", "east", "west")


def _borders(exprs: tuple[str, ...], problem: Mapping[str, object]) -> tuple[int, int, int, int]:
    n, s, e, w = (int(Expr(t, "stencil border").value(problem)) for t in exprs)
    return n, s, e, w


def shifted_views(
    matrix: np.ndarray, problem: Mapping[str, object], borders: tuple[str, ...] = BORDERS
) -> Shifted:
    """``get(dx, dy)``: the matrix shifted so that element [y, x] is cell (x+dx, y+dy), with
    the stencil's boundary rule; computed in float64 (int64 for integers)."""
    n, s, e, w = _borders(borders, problem)
    wide = np.int64 if np.issubdtype(matrix.dtype, np.integer) else np.float64
    m = matrix.astype(wide)
    if problem["boundary"] == "nearest":
        padded = np.pad(m, ((n, s), (w, e)), mode="edge")
    else:
        padded = np.pad(
            m, ((n, s), (w, e)), mode="constant", constant_values=cast(float, problem["pad"])
        )
    height, width = matrix.shape

    def get(dx: int, dy: int) -> np.ndarray:
        return padded[n + dy : n + dy + height, w + dx : w + dx + width]

    return get


@dataclass(frozen=True)
class StencilReference:
    """The numpy reference of a stencil (a class, not a closure, so that it pickles)."""

    function: NumpyFunction
    borders: tuple[str, ...] = BORDERS

    def __call__(self, p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        result = self.function(shifted_views(inputs["input"], p, self.borders), p)
        return {"output": result.astype(numpy_dtype(str(Expr(OUT_DTYPE, "out_dtype").value(p))))}

    def refused_problem(self, p: Mapping[str, object]) -> str | None:
        """Why the stencil cannot run ``p`` (a negative border: a number of cells), or None.
        ``resolve_problem`` asks before anything runs; a restriction would say the same but,
        being part of the spec, would change every stencil's campaign key."""
        for side, text, cells in zip(BORDERS, self.borders, _borders(self.borders, p), strict=True):
            if cells >= 0:
                continue
            if text in p:  # the border is a problem value of its own (or a radius)
                return (
                    f"problem value {text}={cells} is a negative border; a border is a number "
                    f"of cells: give {text}=0 or more"
                )
            return f"its {side} border {text} is {cells}; a border is a number of cells, 0 or more"
        return None


def _plain(c_body: str) -> str:
    return _SOURCE.replace("USER_FUNCTION_BODY", c_body.strip("\n"))


# A guarded GET: an offset outside the borders sets a bit of the flag (1 north, 2 south, 4 east,
# 8 west) and reads the cell itself instead, so nothing outside the tile is touched. Racing
# writes are harmless: any violator's value says the same thing, that the kernel is wrong (the
# flag keeps the last read's bit, not every crossed border's: OR-ing them would change this
# source, part of every guarded stencil's campaign key).
FLAG = "get_outside_borders"
_GUARDED_GET = f"""DEVICE_FN ELEM guarded_get(LOCAL_PTR const ELEM* tile, int tile_w, int lx, int ly,
                           int dx, int dy, GLOBAL int* {FLAG}) {{
    const int outside = (dy < -NORTH) | (dy > SOUTH) << 1 | (dx > EAST) << 2 | (dx < -WEST) << 3;
    if (outside) {{ {FLAG}[0] = outside; dx = 0; dy = 0; }}
    return tile[(ly + NORTH + dy) * tile_w + (lx + WEST + dx)];
}}
#define GET(dx, dy) guarded_get(tile, tile_w, lx, ly, (dx), (dy), {FLAG})"""


def guarded_source(c_body: str) -> str:
    """The stencil's source with every ``GET`` checked against the borders at run time: the
    kernel gets one more output, ``get_outside_borders``, nonzero after a read outside them."""
    plain = _plain(c_body)
    edits = (
        (
            "#define GET(dx, dy) tile[(ly + NORTH + (dy)) * tile_w + (lx + WEST + (dx))]",
            _GUARDED_GET,
        ),
        ("int tile_w, int lx, int ly) {", f"int tile_w, int lx, int ly, GLOBAL int* {FLAG}) {{"),
        ("GLOBAL OUT* RESTRICT out,", f"GLOBAL OUT* RESTRICT out, GLOBAL int* RESTRICT {FLAG},"),
        ("user_function(tile, tile_w, lx, ly)", f"user_function(tile, tile_w, lx, ly, {FLAG})"),
    )
    for old, new in edits:
        assert plain.count(old) == 1, old  # the template above holds each once
        plain = plain.replace(old, new)
    return plain


def stencil_defines(n: str, s: str, e: str, w: str) -> tuple[tuple[str, str], ...]:
    """The template's defines: element types, the borders (expressions) and the boundary."""
    return (
        ("ELEM", "ctype(dtype)"),
        ("OUT", f"ctype({OUT_DTYPE})"),
        ("NORTH", n),
        ("SOUTH", s),
        ("EAST", e),
        ("WEST", w),
        ("NEAREST", "boundary == 'nearest'"),
        ("PAD", "pad"),
    )


def make_stencil(
    name: str,
    c_body: str,
    numpy_function: NumpyFunction | None,
    *,
    problem: Mapping[str, object] | None = None,
    borders: tuple[str, str, str, str] = BORDERS,
    doc: str = "",
    guard: bool = False,
) -> KernelSpec:
    """A SkelCL-style stencil from its customising function (C body and numpy twin).

    The problem values ``width``, ``height``, ``north``, ``south``, ``east``, ``west``,
    ``dtype`` and ``out_dtype`` (int, float, double; 'same'), ``boundary`` ('nearest' or 'pad')
    and ``pad`` have defaults that ``problem`` overrides. ``borders`` are expressions for the
    north/south/east/west border sizes (e.g. a radius). Tunable: the work-group ``wc`` x ``wr``.
    Without ``numpy_function`` outputs are checked against the default size's. With ``guard``,
    every ``GET`` checks its offset against the borders at run time and flags a read outside
    them (``guarded_source``): for bodies whose offsets are not constants.
    """
    defaults: dict[str, object] = {
        "width": 512, "height": 512, "dtype": "float", "out_dtype": "same",
        "boundary": "nearest", "pad": 0,
    }  # fmt: skip
    if borders == BORDERS:
        defaults.update(north=1, south=1, east=1, west=1)
    defaults.update(problem or {})
    n, s, e, w = borders
    return KernelSpec(
        name=name,
        source=(guarded_source if guard else _plain)(c_body),
        entry="stencil",
        language=Language.PORTABLE,
        params=(
            Param("wc", WG_VALUES, ParamKind.LAUNCH),
            Param("wr", WG_VALUES, ParamKind.LAUNCH),
        ),
        global_size=("round_up(width, wc)", "round_up(height, wr)"),
        local_size=("wc", "wr"),
        args=(
            ArrayArg("input", "dtype", ("height", "width")),
            ArrayArg("output", OUT_DTYPE, ("height", "width"), output=True),
            *((ArrayArg(FLAG, "'int'", ("1",), Init.ZEROS, output=True),) if guard else ()),
            ScalarArg("width", "int", "width"),
            ScalarArg("height", "int", "height"),
            LocalArg("tile", "dtype", f"(wc + ({w}) + ({e})) * (wr + ({n}) + ({s}))"),
        ),
        fault_flag=FLAG if guard else "",
        problem=Problem.of(defaults),
        restrictions=("boundary in ('nearest', 'pad')",),
        defines=stencil_defines(n, s, e, w),
        default=Config.of({"wc": 32, "wr": 4}),  # Cummins' "human expert" choice, w(32x4)
        reference=None if numpy_function is None else StencilReference(numpy_function, borders),
        # Columns (dimension 0) or rows (1), each part with its neighbours' border cells.
        split=(
            SplitDim(
                0,
                "width",
                (SplitArray("input", "1"), SplitArray("output", "1")),
                halo=(w, e),
                feeds=(("output", "input"),),
            ),
            SplitDim(
                1,
                "height",
                (SplitArray("input", "0"), SplitArray("output", "0")),
                halo=(n, s),
                feeds=(
                    ("output", "input"),
                ),  # time-stepping: each step reads the last one's output
            ),
        ),
        doc=doc,
    )


BOX_MEAN_C = """
    ELEM sum = 0;
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        for (int dx = -WEST; dx <= EAST; ++dx)
            sum += GET(dx, dy);
    return (OUT)(sum / (ELEM)((NORTH + SOUTH + 1) * (WEST + EAST + 1)));
"""


def box_mean_numpy(get: Shifted, problem: Problem) -> np.ndarray:
    n, s, e, w = _borders(BORDERS, problem)
    total = cast(np.ndarray, sum(get(dx, dy) for dy in range(-n, s + 1) for dx in range(-w, e + 1)))
    return c_mean(total, (n + s + 1) * (w + e + 1), problem)


def c_mean(total: np.ndarray, count: int, problem: Mapping[str, object]) -> np.ndarray:
    """``total / count`` as a C body computes it in ``ELEM``: floating types divide; integer
    types wrap the sum to ``dtype``'s width (a ``char`` sum of 5 cells overflows) and truncate
    toward zero (C's division; numpy's ``//`` floors a negative sum, e.g. with a negative pad)."""
    if not np.issubdtype(total.dtype, np.integer):
        return total / count
    elem = numpy_dtype(str(problem["dtype"]))
    wrapped = total.astype(elem)
    if np.issubdtype(elem, np.unsignedinteger):
        return wrapped // elem.type(count)
    wide = wrapped.astype(np.int64)
    return np.sign(wide) * (np.abs(wide) // count)


def stencil() -> KernelSpec:
    """The generic built-in stencil: the mean of the border region (a box blur whose shape is
    set by north/south/east/west in the problem)."""
    return make_stencil(
        "stencil",
        BOX_MEAN_C,
        box_mean_numpy,
        doc="SkelCL-style 2D stencil: mean over the north/south/east/west border region; "
        "tunes the work-group size wc x wr.",
    )


MAX_BODY = 20_000  # characters of a described stencil's C body
MAX_BORDER = 64
