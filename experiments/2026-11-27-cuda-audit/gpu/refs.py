"""numpy references for the GPU audit specs."""
import numpy as np


def saxpy(problem, inputs):
    return {"y": np.float32(problem["a"]) * inputs["x"] + inputs["y"]}


def triple(problem, inputs):
    # t3: out = a + b where a = x, b = 2x (two separate local buffers)
    return {"out": (inputs["x"] * np.float32(3)).astype(np.float32)}


def align(problem, inputs):
    return {"out": inputs["x"] * 2.0, "mis": np.zeros(1, np.int32)}


def ones(problem, inputs):
    return {"out": np.ones_like(inputs["out"])}


def conv(problem, inputs):
    # t10: out[i] = sum_k coef[k] * x[i + k] (x padded by m-1 at the end)
    x, c = inputs["x"], inputs["coef"]
    n, m = problem["n"], len(c)
    out = np.zeros(n, np.float32)
    for k in range(m):
        out += c[k] * x[k : k + n]
    return {"out": out}


def coords3(problem, inputs):
    nx, ny, nz = problem["nx"], problem["ny"], problem["nz"]
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return {"out": (x + 1000 * y + 1000000 * z).astype(np.int32).reshape(-1)}


def types(problem, inputs):
    return {"y": problem["a"] * inputs["x"] + inputs["y"]}


def half_scale(problem, inputs):
    return {"y": (inputs["x"].astype(np.float32) * 2).astype(np.float16)}


def copy_n(problem, inputs):
    return {"out": inputs["x"].copy()}


def double(problem, inputs):
    return {"y": inputs["x"] * np.float32(2)}
