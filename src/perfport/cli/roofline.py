"""``perfport roofline``: measure a device's practical ceilings once and store them, so every
result of that device reports its fraction of them (docs/roofline.md)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from perfport.cli import render
from perfport.cli.arguments import Subcommands, database

if TYPE_CHECKING:
    from rich.console import Console

_UNITS = {"copy": "GB/s", "read": "GB/s", "write": "GB/s", "fp32": "GFLOP/s", "fp64": "GFLOP/s"}


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "roofline",
        help="measure and store a device's copy/read/write bandwidth and fp32/fp64 FMA rate",
    )
    p.add_argument(
        "--device", help="device id (see 'perfport devices'); default: a GPU if any, else the CPU"
    )
    p.add_argument(
        "--db", type=database, default="perfport.db", help="results database (default: perfport.db)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run_roofline)


def run_roofline(args: argparse.Namespace, console: Console) -> int:
    from perfport._core import PerfportError
    from perfport.devices import get_device
    from perfport.measure.ceilings import measure_ceilings, nominal
    from perfport.store import Store, save_ceilings

    device = get_device(args.device)
    start = time.monotonic()

    def each(run: Any) -> None:
        if not args.json:
            rate = "failed" if run.rate is None else f"{run.rate:.4g} {_UNITS[run.op]}"
            size = f" of {_mib(run.work)} moved" if run.count else ""
            print(f"  {run.op}{size}: {rate}", file=sys.stderr, flush=True)

    # Opened first: a --db it cannot use is refused before seconds of benchmarks, not after.
    with Store(args.db) as store:
        ceilings, runs = measure_ceilings(device, each)
        elapsed = time.monotonic() - start
        if ceilings is None:
            failed = "; ".join(f"{r.op}: {r.outcome} {r.message}" for r in runs if r.rate is None)
            raise PerfportError(f"roofline on {device.id}: a benchmark failed ({failed[:300]})")
        ceilings, kept = save_ceilings(
            store, device, ceilings, {"runs": [r.to_json() for r in runs]}
        )
    clock, lanes = _clock(device)
    driver = nominal(device, clock, lanes)
    if args.json:
        render.print_json(
            {"device": device.id, "device_name": device.name} | ceilings.to_json()
            | {"device": device.id, "fingerprint": device.fingerprint, "nominal": driver,
               "runs": [r.to_json() for r in runs], "seconds": round(elapsed, 2), "db": args.db,
               "kept": list(kept)}
        )  # fmt: skip
        return 0
    _table(console, device.name, ceilings.to_json(), driver)
    curve = ", ".join(f"{_mib(b)} {g:.4g}" for b, g in ceilings.copy_curve)
    console.print(f"copy GB/s by bytes moved (read + written): {curve}", markup=False)
    console.print(
        f"measured in {elapsed:.1f} s; stored for device {device.fingerprint} in {args.db}",
        markup=False,
    )
    if kept:  # a busy machine measures less; the ceiling is the most measured
        console.print(
            f"kept from an earlier run, which measured more: {', '.join(kept)} (this run's "
            "figures are with the runs in --json)",
            markup=False,
        )
    return 0


def _mib(moved: float) -> str:
    return f"{moved / (1 << 20):.4g} MiB"


def _clock(device: Any) -> tuple[int | None, int | None]:
    from perfport._core import Backend

    if device.backend is not Backend.OPENCL:
        return None, None
    from perfport.devices.opencl import opencl_clock

    return opencl_clock(device.id)


def _table(console: Console, name: str, measured: dict[str, Any], driver: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"Ceilings of {name}")
    for col in ("ceiling", "measured", "nominal (driver)"):
        table.add_column(col)
    bandwidth = driver["bandwidth_GBps"]
    for key, label in (("copy_GBps", "copy GB/s"), ("read_GBps", "read GB/s"),
                       ("write_GBps", "write GB/s")):  # fmt: skip
        table.add_row(
            label, f"{measured[key]:.4g}", "unknown" if bandwidth is None else f"{bandwidth:.4g}"
        )
    fp32 = driver["fp32_GFLOPs"]
    table.add_row(
        "fp32 GFLOP/s",
        f"{measured['fp32_GFLOPs']:.4g}",
        "unknown" if fp32 is None else f"{fp32:.4g}",
    )
    fp64 = measured["fp64_GFLOPs"]
    table.add_row(
        "fp64 GFLOP/s", "failed (no float64?)" if fp64 is None else f"{fp64:.4g}", "unknown"
    )
    console.print(table)
    console.print(
        f"nominal: {driver['compute_units']} compute units at {driver['max_clock_MHz'] or '?'} MHz; "
        f"fp32 {driver['fp32_how']}; bandwidth {driver['bandwidth_how']}",
        markup=False,
    )
