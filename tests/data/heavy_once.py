"""A kernel that is slow only on its seeded data: it spins while y[i] >= 0 (random in [0, 1)
at first) and then sets y[i] = -1, so a launch on what an earlier launch left is fast. Each
configuration's first launch is therefore slow if, and only if, the data were reset for it."""

import numpy as np

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg

SOURCE = """
__kernel void heavy_once(__global float* y, int n, int iters) {
    int i = get_global_id(0);
    float x = y[i];
    if (x >= 0.0f) {
        for (int k = 0; k < iters; ++k) x = x * 0.9999f + 0.0001f;
    }
    y[i] = x > 1e30f ? x : -1.0f;  /* always -1: x stays in [0, 1], unknown to the compiler */
}
"""

kernel = KernelSpec(
    name="heavy_once",
    source=SOURCE,
    entry="heavy_once",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),),
    global_size=("n",),
    local_size=("wg",),
    args=(
        ArrayArg("y", "float", ("n",), output=True),
        ScalarArg("n", "int", "n"),  # an argument, not a define: problems share builds
        ScalarArg("iters", "int", "iters"),
    ),
    problem={"n": 64, "iters": 50_000},
    default={"wg": 64},
    reference=lambda problem, inputs: {"y": np.full(problem["n"], -1.0, np.float32)},
)
