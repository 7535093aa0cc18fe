"""``perfport devices`` and ``perfport kernels``: what this machine and perfport offer."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import perfport
from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import Subcommands

if TYPE_CHECKING:
    from rich.console import Console

# A bare install has pyopencl but no OpenCL driver: name the extra that brings one.
NO_DEVICE = (
    "no OpenCL or CUDA device found; pip install 'perfport[pocl]' for PoCL's CPU device "
    "(or install a GPU's OpenCL driver, or CuPy: pip install 'perfport[cuda]')"
)


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("devices", help="list OpenCL and CUDA devices")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_devices)

    p = sub.add_parser("kernels", help="list the built-in kernels")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_kernels)


def run_devices(args: argparse.Namespace, console: Console) -> int:
    devices = perfport.devices()
    if args.json:  # the list stays on stdout, empty or not; the exit status says which
        render.print_json({"devices": [d.to_json() for d in devices]})
    elif devices:
        render.devices_table(console, devices)
    if not devices:  # nothing perfport could tune on: a failure, not an empty table
        raise PerfportError(NO_DEVICE)
    return 0


def run_kernels(args: argparse.Namespace, console: Console) -> int:
    from perfport.kernels import BUILTINS, LOOPY_BUILTINS

    specs = [make() for make in BUILTINS.values()]
    if args.json:
        render.print_json({"kernels": [s.describe() for s in specs],
                           "loopy_kernels": list(LOOPY_BUILTINS)})  # fmt: skip
    else:
        render.kernels_table(console, specs)
        console.print(
            f"loopy kernels of the model's paper (perfport tune on one device; pip install "
            f"'perfport[model]'; docs/model.md): {', '.join(LOOPY_BUILTINS)}",
            highlight=False, markup=False,
        )  # fmt: skip
    return 0
