"""Split time-stepping's launches and halo exchange: enqueue-all-then-wait launches and
concurrent per-device exchange (now) against a thread pool's launches and transfer-by-transfer
blocking exchange (before), side by side on the same devices and problem.

    python benchmarks/split_launch.py [--device opencl:0:0.0 --device opencl:0:0.1]
        [--size 1024] [--steps 30] [--repeats 3] [--smoke] [--json OUT]

The "before" mode swaps in the previous behaviour (a pool task per part per step, and every
halo transfer's read then write, one at a time) with the current kernels, buffers and
sessions, so only the launch and exchange paths differ. One unrecorded run of each mode comes
first (builds, first touches). Prints each mode's median step, exchange and per-step total,
and their ratio before/after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.split import steps as steps_module
from perfport.split.execute import Part, PartRun
from perfport.split.steps import run_steps


def _pooled(runs: Sequence[PartRun]) -> tuple[float, list[float]]:
    import time

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        times = [f.result() for f in [pool.submit(r.launch) for r in runs]]
    return (time.perf_counter() - started) * 1e3, times


def _serial(self: Any, groups: Mapping[int, Sequence[Callable[[], None]]]) -> None:
    for calls in groups.values():
        for call in calls:
            call()


@contextmanager
def before() -> Iterator[None]:
    """The previous launch and exchange paths, for the duration."""
    launch_all, each = steps_module.launch_all, steps_module._Stepper._each
    steps_module.launch_all = _pooled  # type: ignore[assignment]
    steps_module._Stepper._each = _serial  # type: ignore[method-assign]
    try:
        yield
    finally:
        steps_module.launch_all = launch_all  # type: ignore[assignment]
        steps_module._Stepper._each = each  # type: ignore[method-assign]


def measure(devices: list[str], size: int, steps: int) -> dict[str, float]:
    spec = builtin("stencil")
    problem = spec.problem.merged({"width": size, "height": size})
    split = next(s for s in spec.split if s.dimension == 1)
    config = spec.default or {}
    half = size // 2
    parts = [
        Part(get_device(devices[0]), config, 0, half),
        Part(get_device(devices[1]), config, half, size),
    ]
    out = run_steps(spec, problem, parts, split, steps)
    return {"step_ms": out.step_ms, "exchange_ms": out.exchange_ms,
            "per_step_ms": out.total_ms / steps}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", action="append", default=None)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="a seconds-long run")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    devices = args.device or ["opencl:0:0.0", "opencl:0:0.1"]
    if len(devices) != 2:
        print("give --device exactly twice (two devices to split across)", file=sys.stderr)
        return 2
    size, steps, repeats = (128, 5, 1) if args.smoke else (args.size, args.steps, args.repeats)
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for warm_up in (before, nullcontext):  # not recorded: the first runs pay for the builds
        with warm_up():
            measure(devices, size, steps)
    for _ in range(repeats):  # alternate, so drift on a shared machine hits both
        with before():
            runs["before"].append(measure(devices, size, steps))
        runs["after"].append(measure(devices, size, steps))
    summary = {
        mode: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for mode, rs in runs.items()
    }
    print(f"stencil {size}x{size}, {steps} steps, {devices[0]} + {devices[1]}, x{repeats}")
    print("| mode | step ms | exchange ms | per step ms |")
    for mode, m in summary.items():
        print(f"| {mode} | {m['step_ms']:.3f} | {m['exchange_ms']:.3f} | {m['per_step_ms']:.3f} |")
    b, a = summary["before"], summary["after"]
    for key in ("step_ms", "exchange_ms", "per_step_ms"):
        print(f"ratio before/after {key}: {b[key] / a[key]:.2f}" if a[key] else "")
    if args.json:
        args.json.write_text(json.dumps({"devices": devices, "size": size, "steps": steps,
                                         "runs": runs, "summary": summary}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
