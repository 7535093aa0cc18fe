"""``perfport space`` and ``perfport strategies``: what a run would search, and how."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import perfport
from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import Subcommands, add_problem, problem_values

if TYPE_CHECKING:
    from rich.console import Console

    from perfport._core import DeviceInfo


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("space", help="show a kernel's search space and how device limits prune it")
    p.add_argument(
        "kernel", metavar="KERNEL",
        help="built-in name, kernel spec file, or a Kernel Tuner T1 / BAT CAFF space file",
    )  # fmt: skip
    add_problem(p)
    p.add_argument(
        "--device",
        action="append",
        help="device id; default: the default device. Repeat it (--device A --device B) for "
        "each device's legal count and the count legal on all of them",
    )
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
    from perfport.space import empty_space_hint
    from perfport.store.formats.search_space import is_space_file, load_space_file
    from perfport.tune import resolve_problem

    ids = list(dict.fromkeys(args.device or []))  # one device given twice is one device
    if "all" in ids or len(ids) > 1:
        return _run_space_devices(args, console, ids)
    if is_space_file(args.kernel):  # a T1 or CAFF search-space file
        _check_space_file_options(args)
        definition = load_space_file(args.kernel)
        device = get_device(ids[0]) if ids else None
        name, problem, report = definition.name, {}, definition.space(device=device).report
    else:
        spec = resolve_kernel(args.kernel)
        resolved = resolve_problem(spec, problem_values(args.problem))
        device = get_device(ids[0] if ids else None, spec.language)
        space = perfport.kernel_space(spec, resolved, device, args.min_work_groups)
        problem = dict(resolved)
        name, report = spec.name, space.report
    if args.json:
        render.print_json(
            {"kernel": name, "device": device and device.id, "problem": problem, **report.to_json()}
        )
    else:
        render.space_report(console, name, device, report)
    hint = empty_space_hint(report)
    if hint:  # on stderr, so --json output stays one document
        print(f"hint: {hint}", file=sys.stderr)
    return 0


def _run_space_devices(args: argparse.Namespace, console: Console, ids: list[str]) -> int:
    """``--device A --device B``: each device's legal count and the configurations legal on
    every one of them (erdem2018's constraints valid for all devices of the system)."""
    from perfport.devices import named_devices
    from perfport.kernels import resolve_kernel
    from perfport.space import empty_space_hint
    from perfport.split.pruning import common_space
    from perfport.store.formats.search_space import is_space_file, load_space_file
    from perfport.tune import resolve_problem

    if is_space_file(args.kernel):
        _check_space_file_options(args)
        definition = load_space_file(args.kernel)
        devices = _distinct(named_devices(ids))
        name, problem = definition.name, {}
        spaces = [definition.space(device=d) for d in devices]
    else:
        spec = resolve_kernel(args.kernel)
        resolved = resolve_problem(spec, problem_values(args.problem))
        devices = _distinct(named_devices(ids, spec.language))
        name, problem = spec.name, dict(resolved)
        spaces = [perfport.kernel_space(spec, resolved, d, args.min_work_groups) for d in devices]
    result = common_space(devices, spaces)
    if args.json:
        render.print_json(
            {"kernel": name, "devices": [d.id for d in devices], "problem": problem}
            | result.to_json()
        )
    else:
        for d, s in zip(devices, spaces, strict=True):
            render.space_report(console, name, d, s.report)
        console.print(f"legal on all {len(devices)} devices: {result.common} of {result.cartesian}")
    hint = next(filter(None, (empty_space_hint(s.report) for s in spaces)), "")
    if hint:  # once, on stderr as with one device: it is about the kernel, not a device
        print(f"hint: {hint}", file=sys.stderr)
    return 0


def _check_space_file_options(args: argparse.Namespace) -> None:
    """A T1 or CAFF file's conditions read its parameters only, and it has no global size:
    --problem and --min-work-groups were ignored without a word ("problem": {})."""
    flags = {"--problem": args.problem, "--min-work-groups": args.min_work_groups}
    given = [flag for flag, value in flags.items() if value]
    if given:
        raise PerfportError(
            f"{' and '.join(given)} cannot apply to {args.kernel}, a T1 or CAFF search-space "
            "file: its conditions use its parameters only and it launches nothing; drop "
            f"{'them' if len(given) > 1 else 'it'}"
        )


def _distinct(devices: list[DeviceInfo]) -> list[DeviceInfo]:
    """One device under two names (its id and its fingerprint) is listed once, as one id
    given twice is: 'legal on all 2 devices' counted it twice."""
    return list({d.id: d for d in devices}.values())


def run_strategies(args: argparse.Namespace, console: Console) -> int:
    from perfport.strategies import DEFAULT_STRATEGY, GUIDED, STRATEGIES

    rows = [
        {"name": n, "summary": s.summary, "default": n == DEFAULT_STRATEGY,
         "requires": s.requires or None}
        for n, s in {**STRATEGIES, **GUIDED}.items()
    ]  # fmt: skip
    if args.json:
        render.print_json({"default": DEFAULT_STRATEGY, "strategies": rows})
    else:
        for r in rows:
            needs = f"  (needs {r['requires']})" if r["requires"] else ""
            console.print(f"{r['name']:<12} {r['summary']}{'  (default)' if r['default'] else ''}"
                          f"{needs}", highlight=False, markup=False)  # fmt: skip
    return 0
