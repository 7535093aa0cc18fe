"""A kernel spec written in Python, and the Python API that tunes it.

python examples/saxpy.py             # tune it on the default device
perfport tune examples/saxpy.py      # the same from the command line
"""

import numpy as np

import perfport
from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg

SOURCE = """
__kernel void saxpy(__global const float* x, __global float* y, float a, int n) {
    const int base = get_global_id(0) * ITEMS;
    for (int i = 0; i < ITEMS; ++i)
        if (base + i < n)
            y[base + i] = a * x[base + i] + y[base + i];
}
"""


def reference(problem, inputs):
    """y <- a x + y, in numpy: what every configuration must compute."""
    return {"y": np.float32(problem["a"]) * inputs["x"] + inputs["y"]}


kernel = KernelSpec(
    name="saxpy",
    source=SOURCE,
    entry="saxpy",
    language="opencl",
    params=(
        Param("wg", (16, 32, 64, 128, 256), ParamKind.LAUNCH),  # sets the local size
        Param("ITEMS", (1, 2, 4, 8)),  # compiled in as -DITEMS=...
    ),
    global_size=("round_up(ceil_div(n, ITEMS), wg)",),
    local_size=("wg",),
    args=(
        ArrayArg("x", "float", ("n",)),
        ArrayArg("y", "float", ("n",), output=True),  # updated in place
        ScalarArg("a", "float", "a"),
        ScalarArg("n", "int", "n"),
    ),
    problem={"n": 1 << 20, "a": 2.5},
    default={"wg": 64, "ITEMS": 1},
    reference=reference,
)

if __name__ == "__main__":
    result = perfport.tune(kernel, problem={"n": 1 << 18}, budget=10, db="examples.db")
    print("best:", dict(result.best.config), f"{result.best.time_ms:.4f} ms")
    print("outcomes:", result.outcomes)
