"""``perfport serve``: the work-group-size prediction daemon (HTTP, loopback by default)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from perfport.cli.arguments import Subcommands, database, integer_at_least, port, seconds
from perfport.cli.wg import wg_model

if TYPE_CHECKING:
    from rich.console import Console

TOKEN_VARIABLE = "PERFPORT_TOKEN"


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("serve", help="run the work-group-size prediction daemon (HTTP, loopback)")
    p.add_argument(
        "--model",
        help="a model from 'perfport wg train' (default: trained on the shipped data); a model "
        "file is a pickle and runs code when loaded: load only files you made or trust",
    )
    p.add_argument(
        "--db", type=database, default="perfport.db", help="where refused sizes are stored"
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: loopback only; any other warns and needs a token)",
    )
    p.add_argument("--port", type=port, default=8765, help="TCP port to listen on (default 8765)")
    p.add_argument(
        "--token",
        help=f"token that writes (POST /v1/wg/refused) must send as 'Authorization: Bearer "
        f"TOKEN' (default: ${TOKEN_VARIABLE}; off loopback one is generated and printed)",
    )
    p.add_argument(
        "--compile-timeout", type=seconds, default=10.0, help="seconds one kernel build may take"
    )
    p.add_argument(
        "--compile-memory-mb",
        type=integer_at_least(256),
        default=2048,
        help="address space of the process compiling a kernel, MiB (2048)",
    )
    p.add_argument(
        "--max-refusals",
        type=integer_at_least(1),
        default=5000,
        help="client-reported refusals the database may hold (5000)",
    )
    p.add_argument(
        "--workers",
        type=integer_at_least(1),
        help="processes answering on the port (default: one per core, at most 8); refusals, "
        "their limits and caps hold across them",
    )
    p.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace, console: Console) -> int:
    from perfport._core import PerfportError
    from perfport._core.optional import require

    # The arguments first: the web stack and scikit-learn take seconds to import.
    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE) or None
    if token is not None and not 16 <= len(token) <= 512:
        raise PerfportError("--token: give 16 to 512 characters (or leave it out to generate one)")
    if args.compile_memory_mb > 1 << 20:
        raise PerfportError("--compile-memory-mb: give at most 1048576 (1 TiB)")
    if args.workers is not None and args.workers > 64:
        raise PerfportError("--workers: give at most 64 (each process holds its own caches)")
    # The serve extra's packages, named as that extra (not as 'models', which the default
    # model's training would name, nor as a traceback): the web stack, and scikit-learn, which
    # trains the default model.
    for module in ("fastapi", "pydantic", "uvicorn", *(() if args.model else ("sklearn",))):
        require(module, "serve", "perfport serve")
    from perfport.service.app import serve  # FastAPI: only for the daemon
    from perfport.service.compiler import CompileLimits
    from perfport.service.limits import RefusalLimits
    from perfport.service.workers import default_workers

    compile_limits = CompileLimits(args.compile_timeout, args.compile_memory_mb << 20)
    refusal_limits = RefusalLimits(total=args.max_refusals)
    workers = args.workers or default_workers()
    serve(wg_model(args.model), args.db, args.host, args.port, token, compile_limits,
          refusal_limits, workers)  # fmt: skip
    return 0
