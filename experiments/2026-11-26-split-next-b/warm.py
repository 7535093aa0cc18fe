"""The time-stepping JSONs of gpu_run.sh without their first step: a part's first launch
on NVIDIA OpenCL pays its buffers' first placement (about 0.3 s at 16384^2 in session d),
which the 50-step totals carry once. Per run: the first step (launch + exchange), the
median later step (launch + exchange) against the best single device's median step."""

from __future__ import annotations

import json
import pathlib
import statistics
import sys


def line(name: str, o: dict) -> str:
    steps = o["per_step"]
    first = steps[0]["step_ms"] + steps[0]["exchange_ms"]
    later = [s["step_ms"] + s["exchange_ms"] for s in steps[1:-1]] or [steps[-1]["step_ms"]]
    steady = statistics.median(later)
    single = o["best_single"]["step_ms"]
    return (
        f"{name}: first step {first:.3f} ms, median later step {steady:.3f} ms (exchange "
        f"{o['exchange_ms']:.3f} ms, {o['halo_path']}, {o['halo_device_bytes']} B device to "
        f"device) against {single:.3f} ms a step on {o['best_single']['device']} alone: "
        f"{single / steady:.2f}x"
    )


def main(out: str) -> None:
    for f in sorted(pathlib.Path(out).glob("steps-*.json")):
        try:
            print(line(f.stem, json.loads(f.read_text())))
        except (ValueError, KeyError, IndexError, ZeroDivisionError) as exc:
            print(f"{f.stem}: no result ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main(sys.argv[1])
