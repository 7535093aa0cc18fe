"""Kernel Tuner's side: tune the five examples (examples/kernel_tuner/*.cl) with tune_kernel
on the first OpenCL device, with the parameters of the perfport specs. Run with Kernel
Tuner's interpreter: python kt_tune.py OUT.json (sizes and budgets as in run.py)."""

import ast
import json
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

HERE = Path(__file__).resolve().parent
EX = HERE.parents[1] / "examples" / "kernel_tuner"
SIZES = json.loads((HERE / "sizes.json").read_text())


def vector_add_source():
    """The SOURCE string of vector_add.py, read without importing perfport."""
    tree = ast.parse((EX / "vector_add.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "SOURCE":
            return node.value.value
    raise LookupError("no SOURCE in vector_add.py")


def strategy(name):
    budget = SIZES[name]["budget"]
    if budget is None:
        return {"strategy": "brute_force"}
    return {"strategy": "random_sample", "strategy_options": {"max_fevals": budget}}


def calls():
    rng = np.random.default_rng(0)
    f32 = np.float32
    n = SIZES["vector_add"]["n"]
    a, b = rng.random(n, f32), rng.random(n, f32)
    yield (
        "vector_add",
        dict(
            kernel_name="vector_add",
            kernel_source=vector_add_source(),
            problem_size=n,
            arguments=[np.zeros_like(a), a, b, np.int32(n)],
            tune_params={"block_size_x": list(range(128, 1025, 64))},
            answer=[a + b, None, None, None],
        ),
    )
    w, h = SIZES["stencil"]["width"], SIZES["stencil"]["height"]
    old = rng.random(w * h, f32)
    yield (
        "stencil",
        dict(
            kernel_name="stencil_kernel",
            kernel_source=str(EX / "stencil.cl"),
            problem_size=(w, h),
            arguments=[old.copy(), old, np.int32(w), np.int32(h)],
            tune_params={
                "block_size_x": [32 * i for i in range(1, 9)],
                "block_size_y": [2**i for i in range(6)],
            },
            grid_div_x=["block_size_x"],
            grid_div_y=["block_size_y"],
        ),
    )
    n = SIZES["matmul"]["n"]
    A, B = rng.random((n, n), f32), rng.random((n, n), f32)
    yield (
        "matmul",
        dict(
            kernel_name="matmul_kernel",
            kernel_source=str(EX / "matmul.cl"),
            problem_size=(n, n),
            arguments=[np.zeros_like(A), A, B],
            tune_params={
                "block_size_x": [16, 32, 64],
                "block_size_y": [2**i for i in range(6)],
                "tile_size_x": [1, 2, 4, 8],
                "tile_size_y": [1, 2, 4, 8],
            },
            grid_div_x=["block_size_x", "tile_size_x"],
            grid_div_y=["block_size_y", "tile_size_y"],
            restrictions=["block_size_x == block_size_y * tile_size_y"],
            answer=[(A.astype(np.float64) @ B).astype(f32), None, None],
            atol=1e-2,
            compiler_options=[f"-DWIDTH={n}"],
        ),
    )
    w, h = SIZES["convolution"]["width"], SIZES["convolution"]["height"]
    image = rng.random((w + 16) * (h + 16), f32)
    yield (
        "convolution",
        dict(
            kernel_name="convolution_kernel",
            kernel_source=str(EX / "convolution.cl"),
            problem_size=(w, h),
            arguments=[np.zeros(w * h, f32), image, rng.random(17 * 17, f32)],
            tune_params={
                "block_size_x": [16 * i for i in range(1, 9)],
                "block_size_y": [2**i for i in range(6)],
                "tile_size_x": [1, 2, 4],
                "tile_size_y": [1, 2, 4],
            },
            grid_div_x=["block_size_x", "tile_size_x"],
            grid_div_y=["block_size_y", "tile_size_y"],
            compiler_options=[f"-Dimage_width={w}", f"-Dimage_height={h}"],
        ),
    )
    n = SIZES["reduction"]["n"]
    x = rng.random(n, f32)

    def partial_sums_total(expected, actual, atol=None):
        return bool(np.isclose(float(np.sum(actual[0], dtype=np.float64)), expected[0], rtol=1e-4))

    yield (
        "reduction",
        dict(
            kernel_name="sum_floats",
            kernel_source=str(EX / "reduction.cl"),
            problem_size="num_blocks",
            arguments=[np.zeros(1024, f32), x, np.int32(n)],
            tune_params={
                "block_size_x": [2**i for i in range(5, 11)],
                "vector": [1, 2, 4],
                "num_blocks": [2**i for i in range(5, 11)],
                "loop_unroll_factor": [0, 1, 8, 16, 32],
            },
            grid_div_x=[],
            answer=[np.sum(x, dtype=np.float64), None, None],
            verify=partial_sums_total,
        ),
    )


out = {}
for name, call in calls():
    results, env = tune_kernel(lang="OpenCL", verbose=False, quiet=True, **strategy(name), **call)
    timed = [r for r in results if isinstance(r.get("time"), float)]
    best = min(timed, key=lambda r: r["time"])
    keys = list(call["tune_params"])
    out[name] = {
        "best": {k: best[k] for k in keys},
        "time_ms": best["time"],
        "configs": len(results),
        "timed": len(timed),
    }
    print(name, out[name], flush=True)
Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
