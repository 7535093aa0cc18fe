"""What the sweep's at-least-3-launches timing costs against the old single-launch one.

    python experiments/2026-11-23-lawson-gemm-recheck/sweep_timing_cost.py [--kernel matmul] [--problems lawson-gemm]
        [--largest 8] [--device ID] [--json]

``perfport.tune.SWEEP_TIMING`` took one launch for a configuration of 3 ms or more until
2026-11-23 and now takes at least three (experiments/2026-11-23-lawson-gemm-recheck/README.md).
For the ``--largest`` problems of the set (by the product of their numeric values, flags left
out: where the slow configurations are), each problem is swept with both timings, side by side
in one run and in alternating order, each into its own throw-away store; the sweep builds and
verifies the same way in both (after an untimed pass that leaves every build in the runtime's
cache), so the difference in wall time is the extra launches. Printed: each arm's seconds,
their ratio, and how often one arm's time of a configuration is more than twice the other's
(a one-off delay that a single launch keeps and a median of three drops).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from perfport.kernels import load_problems
from perfport.measure import RunSettings, Timing
from perfport.select.table import from_store
from perfport.tune import SWEEP_TIMING, sweep

OLD_TIMING = Timing(warmup=0, min_repeats=1, max_repeats=20, target_s=0.003)
ARMS = {"single": OLD_TIMING, "median_of_3": SWEEP_TIMING}


def largest(problems: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    def size(p: dict[str, Any]) -> float:
        return math.prod(
            float(v) for v in p.values() if isinstance(v, int | float) and not isinstance(v, bool)
        )

    return sorted(problems, key=size, reverse=True)[:n]


def run(
    kernel: str, problems: list[dict[str, Any]], device: str | None, folder: Path
) -> dict[str, Any]:
    # An untimed pass first, so that neither arm pays the first compilation of a program
    # (the runtimes cache builds on disk) or the first use of the device.
    for _ in sweep(kernel, problems, device=device, db=folder / "warm-up.db",
                   settings=RunSettings(timing=Timing.fixed(1, warmup=0))):  # fmt: skip
        pass
    seconds = dict.fromkeys(ARMS, 0.0)
    for i, problem in enumerate(problems):
        order = list(ARMS) if i % 2 == 0 else list(ARMS)[::-1]
        for arm in order:
            started = time.monotonic()
            for _ in sweep(kernel, [problem], device=device, db=folder / f"{arm}.db",
                           settings=RunSettings(timing=ARMS[arm])):  # fmt: skip
                pass
            seconds[arm] += time.monotonic() - started
    single, median = (from_store(folder / f"{arm}.db") for arm in ARMS)
    if single.configs != median.configs or not np.array_equal(single.problems, median.problems):
        raise SystemExit("the two sweeps did not run the same configurations")
    ratio = single.times / median.times  # same canonical order: same problems and configs
    both = np.isfinite(ratio)
    return {
        "device": single.device, "kernel": kernel, "problems": len(problems),
        "configurations": int(both.sum()),
        "seconds": {arm: round(s, 1) for arm, s in seconds.items()},
        "ratio": round(seconds["median_of_3"] / seconds["single"], 3),
        "single_over_2x_median": int((ratio[both] > 2).sum()),
        "median_over_2x_single": int((ratio[both] < 0.5).sum()),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default="matmul")
    parser.add_argument("--problems", default="lawson-gemm", help="a named set or a CSV file")
    parser.add_argument("--largest", type=int, default=8, help="how many of the largest problems")
    parser.add_argument("--device", help="device id (default: a GPU if any, else the CPU)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    problems = largest(load_problems(args.problems), args.largest)
    with tempfile.TemporaryDirectory() as folder:
        report = run(args.kernel, problems, args.device, Path(folder))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    s = report["seconds"]
    print(f"{report['kernel']} on {report['device']}: {report['problems']} problems, "
          f"{report['configurations']} configurations timed both ways")  # fmt: skip
    print(f"  single launch >= 3 ms: {s['single']:.1f} s; at least 3 launches: "
          f"{s['median_of_3']:.1f} s; ratio {report['ratio']:.2f}x")  # fmt: skip
    print(f"  one arm's time more than 2x the other's: single {report['single_over_2x_median']}, "
          f"median of 3 {report['median_over_2x_single']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
