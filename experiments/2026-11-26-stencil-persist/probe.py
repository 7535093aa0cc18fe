"""Where does a 5-point stencil at 4096x4096 float lose to a copy of the same bytes on a GPU?

Hypothesis (issue 29, attempt 4): not the halo re-reads (march, attempt 3, removed them and
lost) but the grid: 5,000+ work-groups in 8+ waves, the last one part-empty, each group
paying its start-up. A persistent grid (a few work-groups per SM, each looping over tiles)
removes both. This probe times, in one process and interleaved, through CuPy (CUDA):

- ``copy``: perfport roofline's copy (one float4 per thread, 256 per block), the reference;
- ``copy_persist``: the same copy, a grid of k blocks per SM looping over the array;
- ``direct``: perfport's best stencil_wide configuration re-written (vw 4, rows R, bx x by);
- ``persist``: the same stencil, tiles of (4 bx) x (R by) cells, k blocks per SM looping.

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

// R rows x 4 columns from (x, y): registers hold rows y-1 .. y+R, each a float4 and, for
// the middle rows, its west and east neighbours.
__device__ __forceinline__ void cells(const float* __restrict__ in, float* __restrict__ out,
                                      int n, int x, int y) {
    if (x >= 1 && y >= 1 && x + 4 < n && y + R < n) {
        float4 v[R + 2];
        float w[R], e[R];
#pragma unroll
        for (int r = 0; r < R + 2; ++r)
            v[r] = *(const float4*)(in + (y - 1 + r) * n + x);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            w[r] = in[(y + r) * n + x - 1];
            e[r] = in[(y + r) * n + x + 4];
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float4 c = v[r + 1], up = v[r], dn = v[r + 2];
            float4 o;
            o.x = 0.2f * (c.x + up.x + dn.x + w[r] + c.y);
            o.y = 0.2f * (c.y + up.y + dn.y + c.x + c.z);
            o.z = 0.2f * (c.z + up.z + dn.z + c.y + c.w);
            o.w = 0.2f * (c.w + up.w + dn.w + c.z + e[r]);
            *(float4*)(out + (y + r) * n + x) = o;
        }
    } else {
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < 4; ++j) {
                const int cx = x + j, cy = y + r;
                if (cx < n && cy < n)
                    out[cy * n + cx] = 0.2f * (at(in, cx, cy, n) + at(in, cx, cy - 1, n)
                        + at(in, cx, cy + 1, n) + at(in, cx - 1, cy, n) + at(in, cx + 1, cy, n));
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


def reference(a: np.ndarray) -> np.ndarray:
    p = np.pad(a, 1, mode="edge")
    return 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


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
    modules = {r: cp.RawModule(code=SOURCE, options=("-DR=%d" % r,)) for r in (1, 2, 4)}
    n4 = N * N // 4
    runs: dict[str, tuple] = {}
    copy = modules[1].get_function("copy")
    cpers = modules[1].get_function("copy_persist")
    runs["copy"] = (copy, ((n4 + 255) // 256,), (256,), (a, b, np.int32(n4)))
    for k in (1, 2, 4, 8, 16):
        runs[f"copy_persist k={k}"] = (cpers, (sms * k,), (256,), (a, b, np.int32(n4)))
    shapes = ((96, 4), (32, 8), (64, 4), (128, 2), (256, 1), (128, 4), (256, 2), (64, 8))
    for r, (bx, by) in itertools.product((1, 2, 4), shapes):
        f = modules[r].get_function("direct")
        grid = ((N // 4 + bx - 1) // bx, (N // r + by - 1) // by)
        runs[f"direct R={r} {bx}x{by}"] = (f, grid, (bx, by), (a, b, np.int32(N)))
        p = modules[r].get_function("persist")
        for k in (3, 6):
            if bx * by * k <= 2048:
                runs[f"persist R={r} {bx}x{by} k={k}"] = (p, (sms * k,), (bx, by), (a, b, np.int32(N)))
    want = reference(host)
    checked = {}
    for name, (f, grid, block, fargs) in runs.items():
        if name.startswith("copy"):
            continue
        b.fill(0)
        f(grid, block, fargs)
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
