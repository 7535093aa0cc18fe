"""``perfport serve``: the work-group-size prediction daemon (HTTP, loopback by default)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from perfport.cli.arguments import Subcommands, port
from perfport.cli.wg import wg_model

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("serve", help="run the work-group-size prediction daemon (HTTP, loopback)")
    p.add_argument(
        "--model", help="a model from 'perfport wg train' (default: trained on the shipped data)"
    )
    p.add_argument("--db", default="perfport.db", help="where refused sizes are stored")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument("--port", type=port, default=8765)
    p.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace, console: Console) -> int:
    from perfport.service.app import serve  # FastAPI: only for the daemon

    serve(wg_model(args.model), args.db, args.host, args.port)
    return 0
