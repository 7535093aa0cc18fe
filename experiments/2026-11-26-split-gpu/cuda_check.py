"""CUDA parts without OpenCL: time-stepping and a single split run of the stencil on cuda:0 +
cuda:1 (CuPy sessions), each checked against one device and the numpy reference.
Run on a 2-GPU machine: PYTHONPATH=src python3 experiments/2026-11-26-split-gpu/cuda_check.py"""

from __future__ import annotations

import json
import sys

import numpy as np

from perfport._core import Config
from perfport.devices.cuda import CudaSession, list_cuda
from perfport.kernels import builtin
from perfport.measure.data import host_arrays
from perfport.split.execute import Part, run_parts
from perfport.split.steps import run_steps

gpus = list_cuda()
spec = builtin("stencil")
full = spec.problem.merged({"width": 1030, "height": 997, "north": 2, "south": 1})
split, c = spec.split[1], Config.of({"wc": 32, "wr": 4})
x = host_arrays(spec, spec.env({}, full), 0)["input"]
for _ in range(6):
    x = spec.reference(full, {"input": x})["output"]
one = run_steps(spec, full, [Part(gpus[0], c, 0, 997)], split, 6, opener=CudaSession)
resplit = {2: [(0, 700), (700, 997)], 4: [(0, 0), (0, 997)]}
two = run_steps(spec, full, [Part(gpus[0], c, 0, 400), Part(gpus[1], c, 400, 997)], split, 6,
                replan=lambda done: resplit.get(len(done)), opener=CudaSession)  # fmt: skip
once = run_parts(spec, full, [Part(gpus[0], c, 0, 500), Part(gpus[1], c, 500, 997)], split,
                 target_s=0.0, opener=CudaSession)  # fmt: skip
first = spec.reference(full, {"input": host_arrays(spec, spec.env({}, full), 0)["input"]})
out = {
    "devices": [g.id for g in gpus],
    "steps_equal_one_device": bool(np.array_equal(one.outputs["output"], two.outputs["output"])),
    "steps_max_error_vs_numpy": float(np.abs(two.outputs["output"] - x).max()),
    "single_run_max_error_vs_numpy": float(np.abs(once.outputs["output"] - first["output"]).max()),
    "per_step": [s.to_json() for s in two.steps],
}
print(json.dumps(out, indent=1))
sys.exit(0 if out["steps_equal_one_device"] and out["steps_max_error_vs_numpy"] < 1e-4 else 1)
