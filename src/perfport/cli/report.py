"""``perfport report``: a static HTML report of the results database."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from perfport.cli import render
from perfport.cli.arguments import Subcommands, database

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "report", help="write a static HTML report (figures, sortable tables) that opens offline"
    )
    p.add_argument("--db", type=database, default="perfport.db", help="the results database")
    p.add_argument("--kernel", help="only this kernel (name or source-hash prefix)")
    p.add_argument("--device", help="only this device (fingerprint or name)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write into")
    p.add_argument(
        "--with", dest="attach", action="append", default=[], metavar="FILE",
        help="add a section from a file: the --json output of 'perfport wg evaluate', "
        "'select evaluate', 'model evaluate' or 'split --sweep N' (repeatable)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the written files as JSON")
    p.set_defaults(run=run_report)


def run_report(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import stored_device
    from perfport.report import write_report

    written = write_report(
        args.db,
        args.output,
        kernel=args.kernel,
        device=stored_device(args.device),
        attach=args.attach,
    )
    if args.json:
        render.print_json(written.to_json())
    else:
        console.print(
            f"wrote {written.files[0]} ({written.results} results, {written.campaigns} "
            f"campaigns) in {written.seconds:.1f} s",
            markup=False,
        )
    return 0
