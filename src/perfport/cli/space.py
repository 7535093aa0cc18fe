"""``perfport space`` and ``perfport strategies``: what a run would search, and how."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import perfport
from perfport.cli import render
from perfport.cli.arguments import Subcommands, add_problem, parse_assignment

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("space", help="show a kernel's search space and how device limits prune it")
    p.add_argument("kernel", metavar="KERNEL")
    add_problem(p)
    p.add_argument("--device", help="device id; default: the default device")
    p.add_argument(
        "--min-work-groups", action="store_true", help="soft rule: work-groups >= compute units"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_space)

    p = sub.add_parser("strategies", help="list search strategies")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_strategies)


def run_space(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import get_device
    from perfport.kernels import resolve_kernel
    from perfport.store.formats.search_space import is_space_file, load_space_file
    from perfport.tune import resolve_problem

    if is_space_file(args.kernel):  # a T1 or CAFF search-space file
        definition = load_space_file(args.kernel)
        device = get_device(args.device) if args.device else None
        name, problem, report = definition.name, {}, definition.space(device=device).report
    else:
        spec = resolve_kernel(args.kernel)
        resolved = resolve_problem(spec, dict(parse_assignment(p) for p in args.problem))
        device = get_device(args.device, spec.language)
        space = perfport.kernel_space(spec, resolved, device, args.min_work_groups)
        problem = dict(resolved)
        name, report = spec.name, space.report
    if args.json:
        render.print_json(
            {"kernel": name, "device": device and device.id, "problem": problem, **report.to_json()}
        )
    else:
        render.space_report(console, name, device, report)
    return 0


def run_strategies(args: argparse.Namespace, console: Console) -> int:
    from perfport.strategies import DEFAULT_STRATEGY, STRATEGIES

    rows = [
        {"name": n, "summary": s.summary, "default": n == DEFAULT_STRATEGY}
        for n, s in STRATEGIES.items()
    ]
    if args.json:
        render.print_json({"default": DEFAULT_STRATEGY, "strategies": rows})
    else:
        for r in rows:
            console.print(f"{r['name']:<12} {r['summary']}{'  (default)' if r['default'] else ''}")
    return 0
