"""The 5-point stencil: ``stencil_wide``'s tunables over the cross of the border region.

``stencil`` and ``stencil_wide`` average the whole box of the border region (a 3x3 box for
1-cell borders). The stencil most HPC codes run (Jacobi, the heat equation, a Laplacian) reads
only the centre row and column: with 1-cell borders, 5 points. ``stencil_cross`` is that mean
with the tunables of ``stencil_wide`` (work-group, rows x vw cells per work-item, a
local-memory tile or direct loads, scalar or vector accesses).

Floating types multiply by the reciprocal of the point count instead of dividing: on an H200
through CUDA an IEEE division per cell cost the 4096x4096 kernel 2 points of a copy's
bandwidth (experiments/2026-11-26-stencil-persist). Integer types divide, as the box mean does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perfport._core import KernelSpec, Problem
from perfport.kernels.stencil import BORDERS, Shifted, _borders, c_mean
from perfport.kernels.stencil_wide import make_wide_stencil

CROSS_MEAN_C = """
    ELEM sum = GET(0, 0);
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        if (dy != 0)
            sum += GET(0, dy);
    for (int dx = -WEST; dx <= EAST; ++dx)
        if (dx != 0)
            sum += GET(dx, 0);
    const int count = 1 + NORTH + SOUTH + WEST + EAST;
    // (ELEM)0.5 is zero only for integer types: the branch folds at compile time.
    return (OUT)((ELEM)0.5 != (ELEM)0 ? sum * ((ELEM)1 / (ELEM)count) : sum / (ELEM)count);
"""


def cross_mean_numpy(get: Shifted, problem: Problem) -> np.ndarray:
    n, s, e, w = _borders(BORDERS, problem)
    total: Any = get(0, 0)
    for dy in (*range(-n, 0), *range(1, s + 1)):
        total = total + get(0, dy)
    for dx in (*range(-w, 0), *range(1, e + 1)):
        total = total + get(dx, 0)
    return c_mean(total, 1 + n + s + e + w, problem)


def stencil_cross() -> KernelSpec:
    """The mean over the border region's centre row and column (5 points for 1-cell
    borders), with ``stencil_wide``'s tunables."""
    return make_wide_stencil(
        "stencil_cross",
        CROSS_MEAN_C,
        cross_mean_numpy,
        doc="5-point stencil (the mean over the border region's centre row and column), "
        "tuning the work-group wc x wr, rows x vw cells per work-item and the variant.",
    )
