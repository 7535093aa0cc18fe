"""A kernel that uses an input as scratch: it sums x into x[0..wg) in place, then writes the
total. Only a configuration that starts from the seeded x gets the reference's total."""

import numpy as np

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg

SOURCE = """
__kernel void rsum(__global float* x, __global float* total, int n) {
    int l = get_local_id(0), w = get_local_size(0);
    float s = 0.0f;
    for (int i = l; i < n; i += w) s += x[i];
    x[l] = s;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (l == 0) { float t = 0.0f; for (int i = 0; i < w; ++i) t += x[i]; total[0] = t; }
}
"""


def reference(problem, inputs):
    return {"total": np.array([inputs["x"].astype(np.float64).sum()], np.float32)}


kernel = KernelSpec(
    name="scratch_input",
    source=SOURCE,
    entry="rsum",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),),
    global_size=("wg",),
    local_size=("wg",),
    args=(
        ArrayArg("x", "float", ("n",)),  # an input, not declared an output, that it overwrites
        ArrayArg("total", "float", (1,), output=True),
        ScalarArg("n", "int", "n"),
    ),
    problem={"n": 4096},
    default={"wg": 64},
    reference=reference,
)
