"""Load perfport's exported cache in Kernel Tuner's simulation mode and print its best."""

import json
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

path = sys.argv[1]
cache = json.loads(Path(path).read_text())
n = cache["problem_size"]
keys = list(cache["tune_params_keys"])  # a copy: Kernel Tuner extends block_size_names
# Simulation mode never compiles: the body is not needed, the signature is.
src = (
    "__kernel void vector_add(__global const float* a, __global const float* b, "
    "__global float* c, int n) {}"
)
a = np.zeros(n, np.float32)
results, env = tune_kernel(
    cache["kernel_name"], src, n, [a, a, a, np.int32(n)], dict(cache["tune_params"]),
    block_size_names=list(keys), simulation_mode=True, cache=path,
    lang="OpenCL", strategy="brute_force", verbose=False, quiet=True,
)  # fmt: skip
best = min((r for r in results if isinstance(r.get("time"), float)), key=lambda r: r["time"])
print(json.dumps({"kt_configs": len(results), "kt_best": {k: best[k] for k in keys},
                  "kt_best_time": best["time"]}))  # fmt: skip
