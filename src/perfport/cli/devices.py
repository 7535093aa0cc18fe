"""``perfport devices`` and ``perfport kernels``: what this machine and perfport offer."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import perfport
from perfport.cli import render
from perfport.cli.arguments import Subcommands

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("devices", help="list OpenCL and CUDA devices")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_devices)

    p = sub.add_parser("kernels", help="list the built-in kernels")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_kernels)


def run_devices(args: argparse.Namespace, console: Console) -> int:
    devices = perfport.devices()
    if args.json:
        render.print_json({"devices": [d.to_json() for d in devices]})
    else:
        render.devices_table(console, devices)
    return 0


def run_kernels(args: argparse.Namespace, console: Console) -> int:
    from perfport.kernels import BUILTINS

    specs = [make() for make in BUILTINS.values()]
    if args.json:
        render.print_json({"kernels": [s.describe() for s in specs]})
    else:
        render.kernels_table(console, specs)
    return 0
