"""The stencil scenarios of Cummins et al. 2016: the synthetic template (section 3.3) and the
real-world kernels of their Table 2, each written in the SkelCL stencil template with a numpy
twin that verifies it.

- ``synthetic``: border sizes 0-30 each way (problem values north/south/east/west), input and
  output types int/float/double, and ``complex`` (False: one load and add per neighbour, a
  memory-bound kernel; True: a short polynomial per neighbour, compute-bound).
- ``gaussian`` (blur of problem value ``radius``), ``gol`` (Conway's Game of Life, a cell lives
  at >= 50), ``heat`` (one explicit heat-equation step), ``nms`` (Canny's non-maximum
  suppression), ``sobel`` (gradient magnitude) and ``threshold`` (no border).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from perfport._core import KernelSpec, Problem
from perfport.kernels.stencil import BORDERS, Shifted, _borders, make_stencil

_FLOATS = "dtype in ('float', 'double')"
_INTS = "dtype == 'int'"

SYNTHETIC_C = """
#if INTEGRAL
    long acc = 0;
#else
    ELEM acc = 0;
#endif
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        for (int dx = -WEST; dx <= EAST; ++dx) {
            const ELEM v = GET(dx, dy);
#if COMPLEX && INTEGRAL
            acc += (v * 3 + 1) % 7 + (v * v) % 5;
#elif COMPLEX
            acc += v * v * (ELEM)0.5 + v * (ELEM)0.25 + (ELEM)1;
#else
            acc += v;
#endif
        }
    return (OUT)(acc / ((NORTH + SOUTH + 1) * (WEST + EAST + 1)));
"""


def synthetic_numpy(get: Shifted, p: Problem) -> np.ndarray:
    n, s, e, w = _borders(BORDERS, p)
    acc: Any = 0  # becomes an array on the first neighbour
    for dy in range(-n, s + 1):
        for dx in range(-w, e + 1):
            v = get(dx, dy)
            if p["complex"] and p["dtype"] == "int":
                acc = acc + (v * 3 + 1) % 7 + (v * v) % 5
            elif p["complex"]:
                acc = acc + v * v * 0.5 + v * 0.25 + 1.0
            else:
                acc = acc + v
    count = (n + s + 1) * (w + e + 1)
    return acc // count if p["dtype"] == "int" else acc / count


def synthetic() -> KernelSpec:
    spec = make_stencil(
        "synthetic",
        SYNTHETIC_C,
        synthetic_numpy,
        problem={"complex": False},
        doc="Cummins' synthetic stencil template: borders 0-30, int/float/double in and out, "
        "simple (memory-bound) or complex (compute-bound).",
    )
    return _with(
        spec,
        restrictions=(
            # A float result truncated to an int would make verification depend on rounding.
            "not (out_dtype == 'int' and dtype != 'int')",
            "max(north, south, east, west) <= 30",
        ),
        defines=(("INTEGRAL", "dtype == 'int'"), ("COMPLEX", "complex")),
    )


GAUSSIAN_C = """
    const float sigma = RADIUS > 0 ? RADIUS / 2.0f : 0.5f;
    ELEM acc = 0, norm = 0;
    for (int dy = -RADIUS; dy <= RADIUS; ++dy)
        for (int dx = -RADIUS; dx <= RADIUS; ++dx) {
            const ELEM weight = (ELEM)exp(-(float)(dx * dx + dy * dy) / (2.0f * sigma * sigma));
            acc += weight * GET(dx, dy);
            norm += weight;
        }
    return (OUT)(acc / norm);
"""


def gaussian_numpy(get: Shifted, p: Problem) -> np.ndarray:
    r = int(p["radius"])
    sigma = r / 2.0 if r > 0 else 0.5
    acc: Any = 0.0  # becomes an array on the first neighbour
    norm = 0.0
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            weight = np.exp(-(dx * dx + dy * dy) / (2.0 * sigma * sigma))
            acc = acc + weight * get(dx, dy)
            norm += weight
    return acc / norm


GOL_C = """
    int live = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            live += (dx != 0 || dy != 0) && GET(dx, dy) >= 50;
    const int alive = GET(0, 0) >= 50;
    return (OUT)((live == 3 || (alive && live == 2)) ? 99 : 0);
"""


def gol_numpy(get: Shifted, p: Problem) -> np.ndarray:
    live = sum(
        (get(dx, dy) >= 50).astype(np.int64) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy
    )
    alive = get(0, 0) >= 50
    return np.where((live == 3) | (alive & (live == 2)), 99, 0)


HEAT_C = """
    const ELEM c = GET(0, 0);
    return (OUT)(c + (ELEM)0.125 * (GET(0, -1) + GET(0, 1) + GET(-1, 0) + GET(1, 0) - 4 * c));
"""


def heat_numpy(get: Shifted, p: Problem) -> np.ndarray:
    c = get(0, 0)
    return c + 0.125 * (get(0, -1) + get(0, 1) + get(-1, 0) + get(1, 0) - 4 * c)


SOBEL_C = """
    const ELEM gx = (GET(1, -1) + 2 * GET(1, 0) + GET(1, 1)) - (GET(-1, -1) + 2 * GET(-1, 0) + GET(-1, 1));
    const ELEM gy = (GET(-1, 1) + 2 * GET(0, 1) + GET(1, 1)) - (GET(-1, -1) + 2 * GET(0, -1) + GET(1, -1));
    return (OUT)sqrt(gx * gx + gy * gy);
"""


def sobel_numpy(get: Shifted, p: Problem) -> np.ndarray:
    gx = (get(1, -1) + 2 * get(1, 0) + get(1, 1)) - (get(-1, -1) + 2 * get(-1, 0) + get(-1, 1))
    gy = (get(-1, 1) + 2 * get(0, 1) + get(1, 1)) - (get(-1, -1) + 2 * get(0, -1) + get(1, -1))
    return np.sqrt(gx * gx + gy * gy)


# Canny's non-maximum suppression on an integer gradient-magnitude image: the gradient's
# direction (from central differences) is quantised to 0/45/90/135 degrees with exact integer
# comparisons against tan(22.5) = 0.4142 and tan(67.5) = 2.4142.
NMS_C = """
    const int c = GET(0, 0);
    const int gx = GET(1, 0) - GET(-1, 0), gy = GET(0, 1) - GET(0, -1);
    const int ax = gx < 0 ? -gx : gx, ay = gy < 0 ? -gy : gy;
    int a, b;
    if (ay * 10000 <= ax * 4142) { a = GET(-1, 0); b = GET(1, 0); }
    else if (ay * 10000 >= ax * 24142) { a = GET(0, -1); b = GET(0, 1); }
    else if ((gx > 0) == (gy > 0)) { a = GET(-1, -1); b = GET(1, 1); }
    else { a = GET(1, -1); b = GET(-1, 1); }
    return (OUT)((c >= a && c >= b) ? c : 0);
"""


def nms_numpy(get: Shifted, p: Problem) -> np.ndarray:
    c = get(0, 0)
    gx, gy = get(1, 0) - get(-1, 0), get(0, 1) - get(0, -1)
    ax, ay = np.abs(gx), np.abs(gy)
    horizontal = ay * 10000 <= ax * 4142
    vertical = ~horizontal & (ay * 10000 >= ax * 24142)
    rising = ~horizontal & ~vertical & ((gx > 0) == (gy > 0))
    a = np.select([horizontal, vertical, rising], [get(-1, 0), get(0, -1), get(-1, -1)], get(1, -1))
    b = np.select([horizontal, vertical, rising], [get(1, 0), get(0, 1), get(1, 1)], get(-1, 1))
    return np.where((c >= a) & (c >= b), c, 0)


THRESHOLD_C = """
    return (OUT)(GET(0, 0) > 50 ? 1 : 0);
"""


def threshold_numpy(get: Shifted, p: Problem) -> np.ndarray:
    return (get(0, 0) > 50).astype(np.int64)


def _with(
    spec: KernelSpec, restrictions: tuple[str, ...] = (), defines: tuple[tuple[str, str], ...] = ()
) -> KernelSpec:
    from dataclasses import replace

    return replace(
        spec, restrictions=spec.restrictions + restrictions, defines=spec.defines + defines
    )


def _fixed(
    name: str,
    c_body: str,
    function: Callable[[Shifted, Problem], np.ndarray],
    border: int,
    dtype: str,
    doc: str,
    types: str,
) -> KernelSpec:
    b = str(border)
    spec = make_stencil(
        name, c_body, function, problem={"dtype": dtype}, borders=(b, b, b, b), doc=doc
    )
    return _with(spec, restrictions=(types,))


def gaussian() -> KernelSpec:
    spec = make_stencil(
        "gaussian",
        GAUSSIAN_C,
        gaussian_numpy,
        problem={"radius": 2},
        borders=("radius",) * 4,
        doc="Gaussian blur of radius 'radius' (1-10 in Cummins' Table 2).",
    )
    return _with(spec, restrictions=(_FLOATS, "0 <= radius <= 30"), defines=(("RADIUS", "radius"),))


def gol() -> KernelSpec:
    return _fixed(
        "gol",
        GOL_C,
        gol_numpy,
        1,
        "int",
        "Conway's Game of Life step (a cell lives at >= 50).",
        _INTS,
    )


def heat() -> KernelSpec:
    return _fixed(
        "heat",
        HEAT_C,
        heat_numpy,
        1,
        "float",
        "One explicit step of the 2D heat equation.",
        _FLOATS,
    )


def nms() -> KernelSpec:
    return _fixed(
        "nms", NMS_C, nms_numpy, 1, "int", "Canny edge detection's non-maximum suppression.", _INTS
    )


def sobel() -> KernelSpec:
    return _fixed("sobel", SOBEL_C, sobel_numpy, 1, "float", "Sobel gradient magnitude.", _FLOATS)


def threshold() -> KernelSpec:
    return _fixed(
        "threshold",
        THRESHOLD_C,
        threshold_numpy,
        0,
        "int",
        "Binary threshold at 50 (no border).",
        _INTS,
    )


STENCILS = {
    "synthetic": synthetic,
    "gaussian": gaussian,
    "gol": gol,
    "heat": heat,
    "nms": nms,
    "sobel": sobel,
    "threshold": threshold,
}
