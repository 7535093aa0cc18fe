"""Tune each old built-in and its new twin at one problem, side by side, on every device asked
for; on CUDA machines also time the vendor baselines (a CuPy device-to-device copy of the
same bytes, cuBLAS SGEMM through cupy.matmul). Writes one JSON file per part.

    python builtins_compare.py --part stencil --scale pocl --devices opencl:0:0 --out DIR

Each tuning run is ``perfport tune ... --json`` in its own process under ``timeout``, so a
crash or a hang costs that run only; the part's JSON records what each run reported.
``--focus vector`` hands the twin an ordered list of configurations instead of the search
(``focus_configs``: the vector accesses at work-group shapes a GPU fills, after the scalar
winners of earlier runs), ``--only-new`` skips the old built-in, and ``--problem k=v`` changes
the scale's problem (the convolution's mask, say).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

# Old built-in -> its new twin, and the problem of each part at each scale: "gpu" is the
# issue's (4096x4096 stencil, a memory-bound 1D convolution, 4096^3 matmul), "pocl" fits the
# 2-core CPU machine, "tiny" tests the script.
PAIRS = {
    "stencil": ("stencil", "stencil_wide"),
    "convolution": ("convolution", "convolution_wide"),
    "matmul": ("matmul", "matmul_tiled"),
}
PROBLEMS: dict[str, dict[str, dict[str, int]]] = {
    "gpu": {
        "stencil": {"width": 4096, "height": 4096},
        "convolution": {"n": 1 << 26, "mask": 9},
        "matmul": {"M": 4096, "N": 4096, "K": 4096},
    },
    "pocl": {
        "stencil": {"width": 2048, "height": 2048},
        "convolution": {"n": 1 << 22, "mask": 9},
        "matmul": {"M": 512, "N": 512, "K": 512},
    },
    "tiny": {
        "stencil": {"width": 96, "height": 80},
        "convolution": {"n": 5000, "mask": 9},
        "matmul": {"M": 64, "N": 64, "K": 64},
    },
}


# Work-group shapes (columns x rows) a GPU fills, the likeliest first; the stencil's earlier
# scalar winners on the H200 (rows 4, direct, 256x2 and 40x4) lead its list as the yardstick.
STENCIL_SHAPES = ((64, 2), (32, 4), (128, 1), (64, 4), (128, 2), (256, 1), (32, 8), (16, 8),
                  (256, 2), (64, 1), (32, 2), (512, 1), (16, 16))  # fmt: skip
STENCIL_SCALAR_WINNERS = ((256, 2), (40, 4), (64, 2))
CONVOLUTION_GROUPS = (256, 128, 512, 64, 1024)


def focus_configs(part: str) -> list[dict[str, Any]]:
    """The twin's configurations worth a GPU's time, in the order to measure them: scalar
    winners first, then vector accesses by rows (or runs) per work-item and vector width."""
    if part == "stencil":
        scalar = [
            {"wc": c, "wr": r, "rows": 4, "vw": 1, "variant": "direct", "access": "scalar"}
            for c, r in STENCIL_SCALAR_WINNERS
        ]
        vector = [
            {"wc": c, "wr": r, "rows": rows, "vw": vw, "variant": variant, "access": "vector"}
            for variant in ("direct", "tile")
            for rows in ((4, 2, 8, 1) if variant == "direct" else (4, 2))
            for vw in ((4, 8, 2) if variant == "direct" else (4,))
            for c, r in STENCIL_SHAPES
        ]
        return scalar + vector
    if part == "convolution":
        scalar = [{"wg": wg, "per_item": 16, "vw": 1, "variant": "direct"} for wg in (64, 256)]
        vector = [
            {"wg": wg, "per_item": per_item, "vw": vw, "variant": "direct"}
            for per_item in (2, 1, 4, 8)
            for vw in (4, 2, 8)
            for wg in CONVOLUTION_GROUPS
        ]
        return scalar + vector
    raise ValueError(f"no focus list for part {part!r}: use stencil or convolution")


@dataclass(frozen=True)
class TuneRun:
    """One ``perfport tune`` run: its best configuration and time, or why there is none."""

    kernel: str
    device: str
    best_ms: float | None
    best_config: dict[str, Any] | None
    measured: int
    seconds_allowed: float
    error: str = ""


def tune(
    kernel: str,
    problem: dict[str, int],
    device: str,
    budget: int,
    max_time: float,
    db: Path,
    configs: Path | None = None,
) -> TuneRun:
    values = [f"{k}={v}" for k, v in problem.items()]
    cmd = [
        sys.executable, "-m", "perfport", "tune", kernel, "--problem", *values,
        "--device", device, "--budget", str(budget), "--max-time", str(max_time),
        "--db", str(db), "--json", *(["--configs", str(configs)] if configs else []),
    ]  # fmt: skip
    # --max-time stops between trials; the outer limit catches a trial that never returns.
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=max_time + 120)
    except subprocess.TimeoutExpired:
        return TuneRun(kernel, device, None, None, 0, max_time, "timed out")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return TuneRun(kernel, device, None, None, 0, max_time, f"exit {done.returncode}: {tail}")
    best = report.get("best") or {}
    return TuneRun(
        kernel,
        device,
        best.get("time_ms"),
        best.get("config"),
        int(report.get("measured", 0)),
        max_time,
    )


def recheck(
    runs: list[TuneRun], problem: dict[str, int], rounds: int, out: Path, part: str
) -> list[TuneRun]:
    """Each run's best configuration measured again ``rounds`` times, old and new built-in
    alternating, each round in a fresh database: on a shared machine the load changes between
    tuning runs, so the ratio is taken from these medians."""
    times: dict[tuple[str, str], list[float]] = {}
    for i in range(rounds):
        for run in runs:
            if run.best_config is None:
                continue
            configs = out / f"{part}-best-{run.kernel}.json"
            configs.write_text(json.dumps([run.best_config]))
            db = out / f"{part}-recheck{i}.db"
            again = tune(run.kernel, problem, run.device, 1, run.seconds_allowed, db, configs)
            if again.best_ms is not None:
                times.setdefault((run.kernel, run.device), []).append(again.best_ms)
    return [
        replace(run, best_ms=statistics.median(times[run.kernel, run.device]))
        for run in runs
        if (run.kernel, run.device) in times
    ]


def median_event_ms(run: Callable[[], object], repeats: int) -> float:
    """Median of CUDA-event times of ``run`` after one warm-up call."""
    import cupy

    run()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(float(cupy.cuda.get_elapsed_time(start, stop)))
    return statistics.median(times)


def part_bytes(part: str, problem: dict[str, int]) -> int:
    """Bytes of the part's output (float32): what a copy of 'the same bytes' moves each way."""
    if part == "stencil":
        return 4 * problem["width"] * problem["height"]
    if part == "convolution":
        return 4 * problem["n"]
    return 4 * problem["M"] * problem["N"]


def cupy_baselines(part: str, problem: dict[str, int], repeats: int) -> dict[str, Any]:
    """The vendor's figure for the part: copy time of the same bytes, or cuBLAS SGEMM."""
    try:
        import cupy
    except ImportError:
        return {"skipped": "CuPy is not installed (the GPU machine has it)"}
    if part == "matmul":
        m, n, k = problem["M"], problem["N"], problem["K"]
        a = cupy.random.random((m, k), dtype=cupy.float32)
        b = cupy.random.random((k, n), dtype=cupy.float32)
        out = cupy.empty((m, n), dtype=cupy.float32)
        ms = median_event_ms(lambda: cupy.matmul(a, b, out=out), repeats)
        return {"cublas_sgemm_ms": ms, "cublas_GFLOPs": 2 * m * n * k / ms / 1e6}
    nbytes = part_bytes(part, problem)
    src = cupy.ones(nbytes // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    ms = median_event_ms(lambda: dst.data.copy_from_device(src.data, nbytes), repeats)
    return {"copy_bytes": nbytes, "copy_ms": ms, "copy_GBps": 2 * nbytes / ms / 1e6}


def ratios(
    part: str, runs: list[TuneRun], baseline: dict[str, Any], gpus: set[str]
) -> list[dict[str, Any]]:
    """Per device: new over old, and on the GPU (``gpus``) the new built-in against the
    vendor's figure: copy time over stencil time is the fraction of copy bandwidth reached."""
    old_name, new_name = PAIRS[part]
    out = []
    for device in sorted({r.device for r in runs}):
        found = {r.kernel: r.best_ms for r in runs if r.device == device}
        old, new = found.get(old_name), found.get(new_name)
        row: dict[str, Any] = {"device": device, "old_ms": old, "new_ms": new}
        if old and new:
            row["speedup_new_over_old"] = old / new
        vendor = baseline.get("copy_ms") or baseline.get("cublas_sgemm_ms")
        if new and vendor and device in gpus:
            row["fraction_of_vendor"] = vendor / new
        out.append(row)
    return out


def run_part(
    args: argparse.Namespace, part: str, devices: list[str], gpus: set[str]
) -> dict[str, Any]:
    problem = {**PROBLEMS[args.scale][part], **dict(args.problem)}
    db = args.out / f"{part}.db"
    focus = None
    if args.focus == "vector":
        focus = args.out / f"{part}-focus.json"
        focus.write_text(json.dumps(focus_configs(part)))
    old, new = PAIRS[part]
    runs = [
        tune(
            kernel,
            problem,
            device,
            args.budget,
            args.max_time,
            db,
            focus if kernel == new else None,
        )
        for device in devices
        for kernel in ((new,) if args.only_new else (old, new))
    ]
    rechecked = recheck(runs, problem, args.recheck, args.out, part)
    baseline = cupy_baselines(part, problem, args.repeats)
    return {
        "part": part,
        "scale": args.scale,
        "problem": problem,
        "focus": args.focus,
        "runs": [asdict(r) for r in runs],
        "rechecked": [asdict(r) for r in rechecked],
        "baseline": baseline,
        "comparison": ratios(part, rechecked or runs, baseline, gpus),
    }


def gpu_devices() -> list[str]:
    """NVIDIA's OpenCL device and CUDA device 0, as ``perfport devices`` lists them."""
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "devices", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    listed = json.loads(done.stdout or '{"devices": []}')["devices"]
    picked = [
        d["id"]
        for d in listed
        if d["backend"] == "cuda" or "nvidia" in (d["vendor"] + d["name"]).lower()
    ]
    return sorted(set(picked))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=[*PAIRS, "all"], default="all")
    p.add_argument(
        "--scale", choices=list(PROBLEMS), default=os.environ.get("BUILTINS_SCALE", "gpu")
    )
    p.add_argument("--devices", default="gpu", help="comma-separated ids, or 'gpu' (NVIDIA's)")
    p.add_argument("--budget", type=int, default=400, help="configurations per tuning run")
    p.add_argument("--max-time", type=float, default=60.0, help="seconds per tuning run")
    p.add_argument("--repeats", type=int, default=50, help="timed launches of each baseline")
    p.add_argument("--recheck", type=int, default=2, help="rounds re-measuring the bests")
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    p.add_argument(
        "--focus", choices=["search", "vector"], default="search",
        help="the twin's configurations: the default strategy's search, or focus_configs's list",
    )  # fmt: skip
    p.add_argument("--only-new", action="store_true", help="tune the new built-in only")
    p.add_argument(
        "--problem", nargs="+", type=_problem_value, default=[], metavar="KEY=INT",
        help="problem values that replace the scale's (e.g. mask=3)",
    )  # fmt: skip
    return p.parse_args(argv)


def _problem_value(text: str) -> tuple[str, int]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: write KEY=INT, e.g. mask=3")
    return key, int(value)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    gpus = set(gpu_devices())
    devices = sorted(gpus) if args.devices == "gpu" else args.devices.split(",")
    if not devices:
        print("no device to tune on: give --devices (see 'perfport devices')", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for part in PAIRS if args.part == "all" else [args.part]:
        result = run_part(args, part, devices, gpus)
        (args.out / f"{part}.json").write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps({"part": part, "comparison": result["comparison"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
