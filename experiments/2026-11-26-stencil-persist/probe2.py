"""Cache hints for the 5-point stencil at 4096x4096 on a GPU (issue 29, after probe.py):
streaming (evict-first) stores and read-only loads, against the copy with and without
streaming stores, and perfport's own stencil_cross source; pipelined timing as perfport's
runner, interleaved rounds, one process (CUDA through CuPy).

    python probe2.py --out probe2.json [--rounds 60]
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


def builtin_cross(a: object, b: object, shapes: tuple[tuple[int, int], ...]) -> dict[str, tuple]:
    from perfport import builtin
    from perfport.devices.dialect import CUDA_PRELUDE

    spec = builtin("stencil_cross")
    runs = {}
    for wc, wr in shapes:
        config = dict(wc=wc, wr=wr, rows=2, vw=4, variant="direct", access="vector")
        env = spec.env(config, dict(width=N, height=N))
        options = tuple(f"-D{k}={v}" for k, v in spec.build_defines(env).items())
        f = cp.RawModule(code=CUDA_PRELUDE + spec.source, options=options).get_function(spec.entry)
        g = spec.geometry(env)
        grid = tuple(gs // ls for gs, ls in zip(g.global_size, g.local_size, strict=True))
        runs[f"stencil_cross {wc}x{wr}"] = (f, grid, g.local_size, (a, b, np.int32(N), np.int32(N)))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--launches", type=int, default=10)
    args = ap.parse_args()
    host = np.random.default_rng(0).random((N, N), dtype=np.float32)
    a = cp.asarray(host)
    b = cp.empty_like(a)
    hints = ("plain", "stcs", "ldg", "stcs+ldg")
    modules = {h: cp.RawModule(code=SOURCE, options=("-DR=2", "-DSHAPE=0", f"-DHINT={h}"))
               for h in range(4)}  # fmt: skip
    n4 = N * N // 4
    grid1 = ((n4 + 255) // 256,)
    runs: dict[str, tuple] = {
        "copy": (modules[0].get_function("copy"), grid1, (256,), (a, b, np.int32(n4))),
        "copy_cs": (modules[0].get_function("copy_cs"), grid1, (256,), (a, b, np.int32(n4))),
    }
    shapes = ((96, 4), (80, 4), (64, 4), (128, 4))
    for h, (bx, by) in ((h, s) for h in range(4) for s in shapes):
        f = modules[h].get_function("direct")
        grid = ((N // 4 + bx - 1) // bx, (N // 2 + by - 1) // by)
        runs[f"cross {hints[h]} {bx}x{by}"] = (f, grid, (bx, by), (a, b, np.int32(N)))
    runs.update(builtin_cross(a, b, shapes))
    want = reference(host, 0)
    checked = {}
    for name, (f, grid, block, fargs) in runs.items():
        if not name.startswith("copy"):
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
        print(f"{name:28s} {ms * 1000:8.2f} us  copy/this {ref / ms:6.3f}  err {checked.get(name, 0):.1e}")
    args.out.write_text(json.dumps({
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "n": N,
        "rounds": args.rounds, "launches": args.launches, "seconds": time.time() - began,
        "median_ms": median, "max_abs_error": checked,
        "quartiles_ms": {k: statistics.quantiles(t, n=4) for k, t in times.items()},
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
