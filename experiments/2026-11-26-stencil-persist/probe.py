"""Where does a 5-point stencil at 4096x4096 float lose to a copy of the same bytes on a GPU?

Hypothesis (issue 29, attempt 4): not the halo re-reads (march, attempt 3, removed them and
lost) but the grid: 5,000+ work-groups in 8+ waves, the last one part-empty, each group
paying its start-up. A persistent grid (a few work-groups per SM, each looping over tiles)
removes both. This probe times, in one process and interleaved, through CuPy (CUDA):

- ``copy``: perfport roofline's copy (one float4 per thread, 256 per block), the reference;
- ``copy_persist``: the same copy, a grid of k blocks per SM looping over the array;
- ``direct``: perfport's best stencil_wide configuration re-written (vw 4, rows R, bx x by);
- ``persist``: the same stencil, tiles of (4 bx) x (R by) cells, k blocks per SM looping.

Calls 1 and 2 refuted the hypothesis (persist is slower; see README) and found the re-written
5-point stencil at 96% of the copy where perfport's built-in (a 3x3 box mean) was at 91.5%.
Call 3 separates what differs: the shape (5-point cross or 3x3 box) and a division against a
multiplication, beside perfport's own stencil_wide source built as its CUDA runner builds it.

    python probe.py --out probe.json [--rounds 40]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

import cupy as cp
import numpy as np

N = 4096

SOURCE = r"""
#ifndef HINT
#define HINT 0
#endif
// HINT (probe2.py; 0 in calls 1-3): 1 streaming stores (evict first), 2 loads through the
// read-only path, 3 both.
#if HINT & 1
#define STORE4(p, v) __stcs((float4*)(p), (v))
#else
#define STORE4(p, v) (*(float4*)(p) = (v))
#endif
#if HINT & 2
#define LOAD4(p) __ldg((const float4*)(p))
#else
#define LOAD4(p) (*(const float4*)(p))
#endif
extern "C" __global__ void copy_cs(const float4* __restrict__ a, float4* __restrict__ b, int n4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) __stcs(b + i, a[i]);
}
extern "C" __global__ void copy(const float4* __restrict__ a, float4* __restrict__ b, int n4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) b[i] = a[i];
}
extern "C" __global__ void copy_persist(const float4* __restrict__ a, float4* __restrict__ b,
                                        int n4) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x)
        b[i] = a[i];
}

__device__ __forceinline__ float at(const float* __restrict__ in, int x, int y, int n) {
    x = min(max(x, 0), n - 1);
    y = min(max(y, 0), n - 1);
    return in[y * n + x];
}

// R rows x 4 columns from (x, y): registers hold rows y-1 .. y+R, each a float4 and its
// west and east neighbours (unused ones are dead loads for the cross). SHAPE: 0 the 5-point
// cross times 0.2, 1 the cross over 5, 2 the 3x3 box over 9 (perfport's box mean), 3 the box
// times 1/9.
__device__ __forceinline__ float el(float4 v, float w, float e, int j) {
    return j < 0 ? w : j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : j == 3 ? v.w : e;
}
__device__ __forceinline__ float point(const float* __restrict__ in, int cx, int cy, int n) {
#if SHAPE < 2
    const float s = at(in, cx, cy, n) + at(in, cx, cy - 1, n) + at(in, cx, cy + 1, n)
                    + at(in, cx - 1, cy, n) + at(in, cx + 1, cy, n);
#else
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            s += at(in, cx + dx, cy + dy, n);
#endif
#if SHAPE == 0
    return 0.2f * s;
#elif SHAPE == 1
    return s / 5.0f;
#elif SHAPE == 2
    return s / 9.0f;
#else
    return s * (1.0f / 9.0f);
#endif
}
__device__ __forceinline__ void cells(const float* __restrict__ in, float* __restrict__ out,
                                      int n, int x, int y) {
    if (x >= 1 && y >= 1 && x + 4 < n && y + R < n) {
        float4 v[R + 2];
        float w[R + 2], e[R + 2];
#pragma unroll
        for (int r = 0; r < R + 2; ++r) {
            v[r] = LOAD4(in + (y - 1 + r) * n + x);
            w[r] = in[(y - 1 + r) * n + x - 1];
            e[r] = in[(y - 1 + r) * n + x + 4];
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            float o[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
#if SHAPE < 2
                const float s = el(v[r + 1], w[r + 1], e[r + 1], j)
                    + el(v[r], w[r], e[r], j) + el(v[r + 2], w[r + 2], e[r + 2], j)
                    + el(v[r + 1], w[r + 1], e[r + 1], j - 1) + el(v[r + 1], w[r + 1], e[r + 1], j + 1);
#else
                float s = 0.0f;
#pragma unroll
                for (int dy = 0; dy < 3; ++dy)
#pragma unroll
                    for (int dx = -1; dx <= 1; ++dx)
                        s += el(v[r + dy], w[r + dy], e[r + dy], j + dx);
#endif
#if SHAPE == 0
                o[j] = 0.2f * s;
#elif SHAPE == 1
                o[j] = s / 5.0f;
#elif SHAPE == 2
                o[j] = s / 9.0f;
#else
                o[j] = s * (1.0f / 9.0f);
#endif
            }
            STORE4(out + (y + r) * n + x, make_float4(o[0], o[1], o[2], o[3]));
        }
    } else {
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < 4; ++j) {
                const int cx = x + j, cy = y + r;
                if (cx < n && cy < n)
                    out[cy * n + cx] = point(in, cx, cy, n);
            }
    }
}

extern "C" __global__ void direct(const float* __restrict__ in, float* __restrict__ out, int n) {
    cells(in, out, n, (blockIdx.x * blockDim.x + threadIdx.x) * 4,
          (blockIdx.y * blockDim.y + threadIdx.y) * R);
}

// Tiles of (4 blockDim.x) x (R blockDim.y) cells, numbered row-major; block b takes tiles
// b, b + gridDim.x, ...
extern "C" __global__ void persist(const float* __restrict__ in, float* __restrict__ out, int n) {
    const int tw = 4 * blockDim.x, th = R * blockDim.y;
    const int across = (n + tw - 1) / tw, tiles = across * ((n + th - 1) / th);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x)
        cells(in, out, n, (t % across) * tw + threadIdx.x * 4, (t / across) * th + threadIdx.y * R);
}
"""


def reference(a: np.ndarray, shape: int) -> np.ndarray:
    p = np.pad(a, 1, mode="edge")
    if shape < 2:
        return (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) / 5
    return sum(p[1 + dy : N + 1 + dy, 1 + dx : N + 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9


def builtin_runs(a: object, b: object) -> dict[str, tuple]:
    """perfport's stencil_wide (the 3x3 box mean) as its CUDA runner builds it, best shapes."""
    from perfport import builtin
    from perfport.devices.dialect import CUDA_PRELUDE

    spec = builtin("stencil_wide")
    runs = {}
    for wc, wr in ((96, 4), (64, 4), (128, 4), (64, 8), (32, 8)):
        config = dict(wc=wc, wr=wr, rows=2, vw=4, variant="direct", access="vector")
        env = spec.env(config, dict(width=N, height=N))
        options = tuple(f"-D{k}={v}" for k, v in spec.build_defines(env).items())
        f = cp.RawModule(code=CUDA_PRELUDE + spec.source, options=options).get_function(spec.entry)
        g = spec.geometry(env)
        grid = tuple(gs // ls for gs, ls in zip(g.global_size, g.local_size, strict=True))
        runs[f"builtin box R=2 {wc}x{wr}"] = (f, grid, g.local_size, (a, b, np.int32(N), np.int32(N)))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--launches", type=int, default=10, help="timed launches per round")
    args = ap.parse_args()
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    host = np.random.default_rng(0).random((N, N), dtype=np.float32)
    a = cp.asarray(host)
    b = cp.empty_like(a)
    modules = {
        (r, shape): cp.RawModule(code=SOURCE, options=(f"-DR={r}", f"-DSHAPE={shape}"))
        for r in (1, 2) for shape in range(4)
    }  # fmt: skip
    n4 = N * N // 4
    runs: dict[str, tuple] = {}
    copy = modules[1, 0].get_function("copy")
    runs["copy"] = (copy, ((n4 + 255) // 256,), (256,), (a, b, np.int32(n4)))
    cpers = modules[1, 0].get_function("copy_persist")
    runs["copy_persist k=16"] = (cpers, (sms * 16,), (256,), (a, b, np.int32(n4)))
    names = ("cross*0.2", "cross/5", "box/9", "box*(1/9)")
    shapes = ((96, 4), (64, 4), (128, 4), (64, 8), (32, 8))
    for (r, shape), (bx, by) in itertools.product(modules, shapes):
        f = modules[r, shape].get_function("direct")
        grid = ((N // 4 + bx - 1) // bx, (N // r + by - 1) // by)
        runs[f"{names[shape]} R={r} {bx}x{by}"] = (f, grid, (bx, by), (a, b, np.int32(N)))
    runs.update(builtin_runs(a, b))
    wants = [reference(host, 0), reference(host, 2)]
    checked = {}
    for name, (f, grid, block, fargs) in runs.items():
        if name.startswith("copy"):
            continue
        b.fill(0)
        f(grid, block, fargs)
        want = wants[0] if name.startswith("cross") else wants[1]
        checked[name] = float(np.max(np.abs(cp.asnumpy(b) - want)))
    for f, grid, block, fargs in runs.values():  # warm up
        for _ in range(3):
            f(grid, block, fargs)
    began = time.time()
    out: dict[str, object] = {
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "sms": sms,
        "n": N, "rounds": args.rounds, "launches": args.launches, "max_abs_error": checked,
    }  # fmt: skip
    # sync: each launch alone (the GPU idle before it); pipelined: the launches of a round
    # queued back to back, each between its own pair of events, as perfport's runner times.
    for mode in ("pipelined", "sync"):
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (f, grid, block, fargs) in runs.items():
                pairs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(args.launches)]
                for start, stop in pairs:
                    start.record()
                    f(grid, block, fargs)
                    stop.record()
                    if mode == "sync":
                        stop.synchronize()
                pairs[-1][1].synchronize()
                times[name].extend(cp.cuda.get_elapsed_time(a, b) for a, b in pairs)
        median = {name: statistics.median(t) for name, t in times.items()}
        ref = median["copy"]
        print(f"--- {mode}")
        for name, ms in sorted(median.items(), key=lambda kv: kv[1])[:30]:
            print(f"{name:32s} {ms * 1000:8.2f} us  copy/this {ref / ms:6.3f}")
        out[mode] = {
            "median_ms": median,
            "quartiles_ms": {k: statistics.quantiles(t, n=4) for k, t in times.items()},
        }
    out["seconds"] = time.time() - began
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
