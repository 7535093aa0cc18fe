"""Many workers vs one on one campaign: wall time of a brute-force campaign on N slots vs 1.

    python benchmarks/scaling.py                      # 4 CPU worker processes vs 1, matmul
    python benchmarks/scaling.py --smoke              # seconds: 8 configurations, 2 vs 1
    python benchmarks/scaling.py --dask --device cuda:0 --device cuda:1 --kernel convolution2d

With one ``--device`` (a CPU), its slots are ``--workers`` worker processes on it, each with
PoCL single-threaded (``POCL_MAX_PTHREAD_COUNT=1``, set before PoCL loads), so N workers use
N cores and one uses one. With several ``--device``, the slots are those devices, against
the first alone. ``--dask`` sends the trials through a local Dask cluster (one worker process
per slot, perfport[cluster]) instead of local worker processes. Each run starts with empty
compile caches (PoCL's and pyopencl's) and its own store, so neither run reuses the other's
builds. The goal (issue 28): at least 1.8x with four CPU workers, and with two GPUs.

Prints per run the wall time, trials, wall per trial and the device-busy time per trial
(build + timed launches, as each trial reports them), and the ratio wall(1) / wall(N).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

# One thread per worker, set before any import loads PoCL (PoCL >= 4 reads the second name).
os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
os.environ.setdefault("POCL_CPU_MAX_CU_COUNT", os.environ["POCL_MAX_PTHREAD_COUNT"])

from perfport import PerfportError, RunSettings, Timing
from perfport.devices import get_device
from perfport.tune.multi import Slot, tune_many
from perfport.tune.progress import Board

MATMUL = {"M": 256, "N": 256, "K": 256}  # CPU-bound: 16.8 M multiply-adds a trial


def _campaign(args: argparse.Namespace, slots: list[Slot], folder: Path) -> dict[str, Any]:
    """One brute-force campaign on ``slots`` with cold caches; its wall time and trials."""
    os.environ["POCL_CACHE_DIR"] = str(folder / "pocl")  # worker processes inherit these
    os.environ["XDG_CACHE_HOME"] = str(folder / "cache")
    os.environ["CUDA_CACHE_PATH"] = str(folder / "cuda")  # NVIDIA's OpenCL and CUDA builds
    settings = RunSettings(timing=Timing.fixed(args.repeats))
    run = partial(
        tune_many, args.kernel, problem=args.problem, strategy="brute_force",
        budget=args.budget, db=folder / "scaling.db", settings=settings,
        board=Board(sys.stderr, live=False, interval_s=10),
    )  # fmt: skip
    started = time.perf_counter()
    if args.dask:
        from distributed import Client

        from perfport.tune.cluster import DaskMeasurer, cluster_slots, local_cluster

        env = {k: os.environ[k] for k in ("POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT")}
        with local_cluster([s.device for s in slots], env) as cluster, Client(cluster) as c:
            started = time.perf_counter()  # the cluster's start is not the campaign's
            results = run(cluster_slots(c), make_measurer=partial(DaskMeasurer, c))
    else:
        results = run(slots)
    wall = time.perf_counter() - started
    ms = [m for r in results for m in r.measurements]
    busy = sum((m.compile_ms or 0.0) + sum(m.times_ms) for m in ms) / 1000
    return {"slots": len(slots), "wall_s": wall, "trials": len(ms), "busy_s": busy}


def _slots(args: argparse.Namespace, many: bool) -> list[Slot]:
    devices = [get_device(i) for i in args.device]
    if len(devices) > 1:
        return [Slot(d, d.id) for d in (devices if many else devices[:1])]
    n = args.workers if many else 1
    return [Slot(devices[0], f"{devices[0].id}#{k}") for k in range(n)]


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernel", default="matmul")
    p.add_argument("--problem", nargs="*", default=[], metavar="NAME=VALUE")
    p.add_argument("--device", action="append", help="default: opencl:0:0 (PoCL)")
    p.add_argument("--workers", type=int, default=4, help="slots on one device (default 4)")
    p.add_argument("--budget", type=int, default=96, help="configurations per run (default 96)")
    p.add_argument("--repeats", type=int, default=5, help="timed launches a trial (default 5)")
    p.add_argument("--dask", action="store_true", help="through a local Dask cluster")
    p.add_argument("--smoke", action="store_true", help="seconds: 8 configurations, 2 vs 1")
    p.add_argument(
        "--only", choices=("one", "many"),
        help="run one of the two campaigns (a device call too short for both runs each apart)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()
    args.device = args.device or ["opencl:0:0"]
    given = dict(a.split("=", 1) for a in args.problem)
    problem: dict[str, Any] = {k: int(v) if v.isdigit() else v for k, v in given.items()}
    if args.kernel == "matmul" and not problem:
        problem = dict(MATMUL)
    if args.smoke:
        args.budget, args.workers, args.repeats = 8, 2, 2
        if args.kernel == "matmul":
            problem = {"M": 64, "N": 64, "K": 64}
    args.problem = problem
    return args


def main() -> None:
    args = _arguments()
    runs = []
    for many in (False, True):  # one slot first: its cold caches are as cold as the other's
        if args.only and many != (args.only == "many"):
            continue
        with tempfile.TemporaryDirectory(prefix="perfport-scaling-") as tmp:
            runs.append(_campaign(args, _slots(args, many), Path(tmp)))
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)  # kept if a later run is cut
    if len(runs) == 1:
        print(json.dumps({"runs": runs, "ratio": None, "dask": args.dask}))
        return
    one, n = runs
    ratio = one["wall_s"] / n["wall_s"]
    if args.json:
        print(json.dumps({"runs": runs, "ratio": ratio, "dask": args.dask}))
        return
    print(f"{args.kernel} {args.problem}, brute force, budget {args.budget}, dask={args.dask}")
    print("| slots | trials | wall s | wall per trial ms | busy per trial ms |")
    print("|---|---|---|---|---|")
    for r in runs:
        per, busy = 1000 * r["wall_s"] / r["trials"], 1000 * r["busy_s"] / r["trials"]
        print(f"| {r['slots']} | {r['trials']} | {r['wall_s']:.2f} | {per:.1f} | {busy:.1f} |")
    print(f"ratio wall(1) / wall({n['slots']}): {ratio:.2f}x")


if __name__ == "__main__":
    try:
        main()
    except PerfportError as exc:  # an unknown --device and the like: one line, as perfport's
        sys.exit(f"scaling.py: error: {exc}")
