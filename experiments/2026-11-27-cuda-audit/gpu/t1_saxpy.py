"""T1b: the same CUDA kernel as a Python spec."""
from pathlib import Path

import numpy as np

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg


def reference(problem, inputs):
    return {"y": np.float32(problem["a"]) * inputs["x"] + inputs["y"]}


kernel = KernelSpec(
    name="audit_saxpy_cuda_py",
    source=(Path(__file__).parent / "saxpy.cu").read_text(),
    entry="saxpy",
    language="cuda",
    params=(Param("wg", (64, 128, 256), ParamKind.LAUNCH), Param("ITEMS", (1, 2))),
    global_size=("round_up(ceil_div(n, ITEMS), wg)",),
    local_size=("wg",),
    args=(
        ArrayArg("x", "float", ("n",)),
        ArrayArg("y", "float", ("n",), output=True),
        ScalarArg("a", "float", "a"),
        ScalarArg("n", "int", "n"),
    ),
    problem={"n": 100000, "a": 2.5},
    default={"wg": 64, "ITEMS": 1},
    reference=reference,
)
