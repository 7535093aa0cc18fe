"""Kernel Tuner's matrix-multiplication example as a perfport spec (docs/from-kernel-tuner.md).

perfport tune examples/kernel_tuner/matmul.py --problem n=512 --budget 8 --objective GFLOPs
"""

from pathlib import Path

import numpy as np

from perfport import ArrayArg, KernelSpec, Param


def reference(problem, inputs):
    """C = A B, accumulated in float64 so the reference adds no error of its own."""
    n = problem["n"]
    a = inputs["A"].astype(np.float64).reshape(n, n)
    b = inputs["B"].astype(np.float64).reshape(n, n)
    return {"C": (a @ b).astype(np.float32).reshape(-1)}


kernel = KernelSpec(
    name="kt_matmul",
    source=(Path(__file__).parent / "matmul.cl").read_text(),
    entry="matmul_kernel",
    # All four are compile-time parameters (-D block_size_x=...): the local tiles' sizes.
    params=(
        Param("block_size_x", (16, 32, 64)),
        Param("block_size_y", (1, 2, 4, 8, 16, 32)),
        Param("tile_size_x", (1, 2, 4, 8)),
        Param("tile_size_y", (1, 2, 4, 8)),
    ),
    restrictions=[
        "block_size_x == block_size_y * tile_size_y",  # Kernel Tuner's one restriction
        # The kernel has no bounds checks: whole blocks of C only. At Kernel Tuner's n = 4096
        # (and down to 512) this removes nothing, so the space is Kernel Tuner's.
        "n % (block_size_x * tile_size_x) == 0 and n % block_size_x == 0",
    ],
    # grid_div_x = [block_size_x, tile_size_x]: n / (bx * tx) groups of bx work-items
    global_size=(
        "ceil_div(n, block_size_x * tile_size_x) * block_size_x",
        "ceil_div(n, block_size_y * tile_size_y) * block_size_y",
    ),
    local_size=("block_size_x", "block_size_y"),
    defines={"WIDTH": "n"},
    local_mem="4 * block_size_x * block_size_x * (1 + tile_size_x)",  # the two tiles
    args=(
        ArrayArg("C", "float", ("n * n",), init="zeros", output=True, atol=1e-3, rtol=1e-4),
        ArrayArg("A", "float", ("n * n",)),
        ArrayArg("B", "float", ("n * n",)),
    ),
    problem={"n": 1024},
    default={"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1},
    reference=reference,
    flops="2 * n**3",  # adds the metric GFLOPs (Kernel Tuner's example: "GFLOP/s")
    bytes="3 * 4 * n * n",
    doc="Kernel Tuner's examples/opencl/matmul.py",
)
