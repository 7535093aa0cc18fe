"""``perfport worker``: serve this machine's devices to a Dask scheduler, for
``perfport tune --cluster ADDRESS`` (needs perfport[cluster]; docs/cluster.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from perfport.cli.arguments import Subcommands, scheduler_address

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "worker", help="serve this machine's devices to a Dask scheduler (perfport tune --cluster)"
    )
    p.add_argument(
        "--scheduler", required=True, metavar="ADDRESS", type=scheduler_address,
        help="the Dask scheduler's address, e.g. tcp://10.0.0.1:8786",
    )  # fmt: skip
    p.add_argument(
        "--device", action="append", metavar="ID",
        help="a device to serve (repeat for several; 'all': every device here); default: a GPU "
        "if any, else the CPU",
    )  # fmt: skip
    p.set_defaults(run=run_worker)


def run_worker(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import named_devices
    from perfport.tune.cluster import serve

    devices = named_devices(args.device or [None])  # 'all' comes alone
    console.print(
        f"serving {', '.join(d.id for d in devices)} to {args.scheduler} (Ctrl-C stops)",
        highlight=False,
    )
    serve(args.scheduler, devices)
    return 0
