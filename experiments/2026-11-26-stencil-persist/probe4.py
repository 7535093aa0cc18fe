"""stencil_cross with one path for every whole run (probe3 found the border path costs the
kernel about 2 points): border work-items load a window whose rows and border columns are
clamped to the matrix (the nearest boundary), so no warp splits into a scalar path. Timed beside
the original, probe3's "loads first", and the hand-written cross, pipelined, interleaved, one
process (CUDA, CuPy); each variant checked against numpy.

    python probe4.py --out probe4.json [--rounds 60]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe import SOURCE, N, reference
from probe3 import LOADS_FIRST, ROW_LOOP

SIGNATURE = """DEVICE_FN void direct_vector(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width,
                             int x, int y) {"""
SIGNATURE_H = """DEVICE_FN void direct_vector(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width,
                             int height, int x, int y) {"""
CLAMPED = {
    "interleaved": """    for (int r = 0; r < ROWS + NORTH + SOUTH; ++r) {
        GLOBAL const ELEM* row = in + min(max(y - NORTH + r, 0), height - 1) * width;
#pragma unroll
        for (int k = 0; k < WEST; ++k)
            win[r][k] = row[max(x - WEST + k, 0)];
        load_run(win[r] + WEST, row + x);
#pragma unroll
        for (int k = 0; k < EAST; ++k)
            win[r][WEST + VW + k] = row[min(x + VW + k, width - 1)];
    }""",
    "loads first": """    for (int r = 0; r < ROWS + NORTH + SOUTH; ++r)
        load_run(win[r] + WEST, in + min(max(y - NORTH + r, 0), height - 1) * width + x);
#pragma unroll
    for (int r = 0; r < ROWS + NORTH + SOUTH; ++r) {
        GLOBAL const ELEM* row = in + min(max(y - NORTH + r, 0), height - 1) * width;
#pragma unroll
        for (int k = 0; k < WEST; ++k)
            win[r][k] = row[max(x - WEST + k, 0)];
#pragma unroll
        for (int k = 0; k < EAST; ++k)
            win[r][WEST + VW + k] = row[min(x + VW + k, width - 1)];
    }""",
}
DISPATCH = """    const int inside = x >= WEST && y >= NORTH && x + VW - 1 + EAST < width
                       && y + ROWS - 1 + SOUTH < height;
    if (inside) {
#if VEC
        direct_vector(in, out, width, x, y);
#else"""
DISPATCH_WHOLE = """#if VEC
    if (x + VW <= width && y + ROWS <= height) {
        direct_vector(in, out, width, height, x, y);
        return;
    }
#endif
    const int inside = x >= WEST && y >= NORTH && x + VW - 1 + EAST < width
                       && y + ROWS - 1 + SOUTH < height;
    if (inside) {
#if VEC
#else"""


def sources() -> dict[str, str]:
    from perfport import builtin

    source = builtin("stencil_cross").source
    for part in (ROW_LOOP, SIGNATURE, DISPATCH):
        assert part in source, "stencil_wide's source changed: update probe4"
    out = {"original": source, "loads first": source.replace(ROW_LOOP, LOADS_FIRST)}
    whole = source.replace(SIGNATURE, SIGNATURE_H).replace(DISPATCH, DISPATCH_WHOLE)
    for label, loop in CLAMPED.items():
        out[f"one path, {label}"] = whole.replace(ROW_LOOP, loop)
    return out


def main() -> None:
    from perfport import builtin
    from perfport.devices.dialect import CUDA_PRELUDE

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--launches", type=int, default=10)
    args = ap.parse_args()
    host = np.random.default_rng(0).random((N, N), dtype=np.float32)
    a = cp.asarray(host)
    b = cp.empty_like(a)
    mine = cp.RawModule(code=SOURCE, options=("-DR=2", "-DSHAPE=0"))
    n4 = N * N // 4
    runs: dict[str, tuple] = {
        "copy": (mine.get_function("copy"), ((n4 + 255) // 256,), (256,), (a, b, np.int32(n4)))
    }
    spec = builtin("stencil_cross")
    for wc, wr in ((96, 4), (80, 4), (128, 4)):
        runs[f"hand-written {wc}x{wr}"] = (mine.get_function("direct"),
            ((N // 4 + wc - 1) // wc, (N // 2 + wr - 1) // wr), (wc, wr), (a, b, np.int32(N)))  # fmt: skip
        config = dict(wc=wc, wr=wr, rows=2, vw=4, variant="direct", access="vector")
        env = spec.env(config, dict(width=N, height=N))
        options = tuple(f"-D{k}={v}" for k, v in spec.build_defines(env).items())
        g = spec.geometry(env)
        grid = tuple(gs // ls for gs, ls in zip(g.global_size, g.local_size, strict=True))
        for label, text in sources().items():
            f = cp.RawModule(code=CUDA_PRELUDE + text, options=options).get_function(spec.entry)
            runs[f"{label} {wc}x{wr}"] = (f, grid, g.local_size, (a, b, np.int32(N), np.int32(N)))
    want = reference(host, 0)
    checked = {}
    for name, (f, grid, block, fargs) in runs.items():
        if name != "copy":
            b.fill(0)
            f(grid, block, fargs)
            checked[name] = float(np.max(np.abs(cp.asnumpy(b) - want)))
    for f, grid, block, fargs in runs.values():
        for _ in range(3):
            f(grid, block, fargs)
    began = time.time()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (f, grid, block, fargs) in runs.items():
            pairs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(args.launches)]
            for start, stop in pairs:
                start.record()
                f(grid, block, fargs)
                stop.record()
            pairs[-1][1].synchronize()
            times[name].extend(cp.cuda.get_elapsed_time(x, y) for x, y in pairs)
    median = {name: statistics.median(t) for name, t in times.items()}
    ref = median["copy"]
    for name, ms in sorted(median.items(), key=lambda kv: kv[1]):
        print(f"{name:32s} {ms * 1000:8.2f} us  copy/this {ref / ms:6.3f}  err {checked.get(name, 0):.1e}")
    args.out.write_text(json.dumps({
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "n": N,
        "rounds": args.rounds, "launches": args.launches, "seconds": time.time() - began,
        "median_ms": median, "max_abs_error": checked,
        "quartiles_ms": {k: statistics.quantiles(t, n=4) for k, t in times.items()},
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
