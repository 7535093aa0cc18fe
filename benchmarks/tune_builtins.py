"""Tune the built-in stencil and matmul on every device of a machine and write a report.

    python benchmarks/tune_builtins.py --out DIR [--devices all|ID,ID] [--stencil-size 4096]
        [--matmul-size 1024] [--cpu-budget 60]

GPUs get an exhaustive (brute-force) campaign; CPU devices a random campaign of --cpu-budget
configurations, to bound the time. Writes DIR/perfport.db (every sample), DIR/summary.json and
DIR/summary.md (best and default configuration per device and kernel, with outcome counts).
This is the script behind docs/results/*-builtins/.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import perfport
from perfport import Budget, DeviceInfo, RunSettings
from perfport._core import DeviceType


def problems(stencil_size: int, matmul_size: int) -> dict[str, dict[str, Any]]:
    return {
        "stencil": {"width": stencil_size, "height": stencil_size},
        "matmul": {"M": matmul_size, "N": matmul_size, "K": matmul_size},
    }


def run(
    device: DeviceInfo, kernel: str, problem: dict[str, Any], db: Path, cpu_budget: int
) -> dict[str, Any]:
    cpu = device.type is DeviceType.CPU
    started = time.perf_counter()
    result = perfport.tune(
        kernel,
        problem=problem,
        device=device,
        strategy="random" if cpu else "brute_force",
        budget=Budget(max_evals=cpu_budget) if cpu else None,
        db=db,
        settings=RunSettings(timeout_s=60.0),
    )
    summary = result.to_json()
    summary["elapsed_s"] = round(time.perf_counter() - started, 1)
    print(
        f"{device.id:14} {kernel:8} measured {result.measured:4} best {summary['best'] and summary['best']['time_ms']:.4g} ms "
        f"default {summary['default'] and summary['default']['time_ms']} ms speedup {result.speedup} "
        f"({summary['elapsed_s']} s) {result.outcomes}",
        flush=True,
    )
    return summary


def markdown(summaries: list[dict[str, Any]], header: str) -> str:
    lines = [
        header,
        "",
        "| device | kernel | problem | measured | outcomes | best config | best ms | default ms | speedup |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        best, default = s["best"], s["default"]
        problem = " ".join(
            f"{k}={v}"
            for k, v in s["problem"].items()
            if k in ("width", "height", "M", "N", "K", "dtype")
        )
        outcomes = ", ".join(f"{k} {v}" for k, v in s["outcomes"].items() if v)
        lines.append(
            f"| {s['device']['name']} ({s['device']['backend']}) | {s['kernel']} | {problem} | {s['measured']} | {outcomes} | "
            f"{' '.join(f'{k}={v}' for k, v in best['config'].items()) if best else '-'} | "
            f"{best['time_ms']:.4g} | {default['time_ms']:.4g} | {s['speedup_over_default']:.2f}x |"
            if best and default and default["time_ms"]
            else f"| {s['device']['name']} | {s['kernel']} | {problem} | {s['measured']} | {outcomes} | - | - | - | - |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--devices", default="all", help="'all' or comma-separated device ids")
    parser.add_argument("--kernels", default="stencil,matmul")
    parser.add_argument("--stencil-size", type=int, default=4096)
    parser.add_argument("--matmul-size", type=int, default=1024)
    parser.add_argument("--cpu-budget", type=int, default=60)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="seconds: the stencil at 256^2, 3 trials, default device",
    )
    args = parser.parse_args()
    if args.smoke:
        args.kernels, args.stencil_size, args.cpu_budget = "stencil", 256, 3
        args.devices = perfport.get_device().id
    args.out.mkdir(parents=True, exist_ok=True)
    devices = (
        perfport.devices()
        if args.devices == "all"
        else [perfport.get_device(d) for d in args.devices.split(",")]
    )
    chosen = problems(args.stencil_size, args.matmul_size)
    summaries = []
    for device in devices:
        for kernel in args.kernels.split(","):
            summaries.append(
                run(device, kernel, chosen[kernel], args.out / "perfport.db", args.cpu_budget)
            )
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    (args.out / "summary.json").write_text(
        json.dumps({"date": stamp, "host": platform.node(), "results": summaries}, indent=1)
    )
    header = (
        f"Built-in kernels tuned on {platform.node()}, {stamp}, perfport {perfport.__version__}"
    )
    (args.out / "summary.md").write_text(markdown(summaries, header))
    print(markdown(summaries, header))


if __name__ == "__main__":
    main()
