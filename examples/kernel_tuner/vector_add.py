"""Kernel Tuner's vector-add example as a perfport spec (docs/from-kernel-tuner.md).

perfport tune examples/kernel_tuner/vector_add.py --budget 5
"""

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg

# One work-item per element; the guard covers the padding to whole work-groups.
SOURCE = """
__kernel void vector_add(__global float* c, __global const float* a,
                         __global const float* b, int n) {
    const int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
"""


def reference(problem, inputs):
    """What every configuration must write into c."""
    return {"c": inputs["a"] + inputs["b"]}


kernel = KernelSpec(
    name="kt_vector_add",
    source=SOURCE,
    entry="vector_add",
    # Kernel Tuner: tune_params["block_size_x"] = 128, 192, ..., 1024 (15 values)
    params=(Param("block_size_x", tuple(range(128, 1025, 64)), ParamKind.LAUNCH),),
    # Kernel Tuner's grid is ceil(n / block_size_x) groups; OpenCL counts work-items.
    global_size=("round_up(n, block_size_x)",),
    local_size=("block_size_x",),
    args=(
        ArrayArg("c", "float", ("n",), init="zeros", output=True),
        ArrayArg("a", "float", ("n",)),
        ArrayArg("b", "float", ("n",)),
        ScalarArg("n", "int", "n"),
    ),
    problem={"n": 10_000_000},
    default={"block_size_x": 128},
    reference=reference,
    bytes="3 * 4 * n",  # a and b read, c written, float32: adds the metric GBps
    flops="n",
    doc="Kernel Tuner's examples/opencl/vector_add.py",
)

if __name__ == "__main__":
    import perfport

    result = perfport.tune(kernel, problem={"n": 1 << 20}, budget=5, db="kt_examples.db")
    print("best:", dict(result.best.config), f"{result.best.time_ms:.4f} ms")
    print("space:", result.space.legal, "outcomes:", result.outcomes)
