"""``perfport model ...``: calibrated analytical performance models (Stevens and Klöckner).
The handlers import the model capability (and loopy) when they run, so ``--help`` imports
none of it."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING, Any

from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import Subcommands, add_problem, count, database
from perfport.cli.model_evaluate import add_evaluate
from perfport.cli.model_fit import (
    _cache_folder,
    _sizes,
    add_config,
    add_parsers,
    checked,
    with_defaults,
)

if TYPE_CHECKING:
    from rich.console import Console

    from perfport.model import EvaluatedStats, KernelStats


def add_parser(sub: Subcommands) -> None:
    model = sub.add_parser("model", help="calibrated analytical performance models (loopy)")
    model_sub = model.add_subparsers(dest="model_command", required=True, metavar="COMMAND")
    p = model_sub.add_parser(
        "stats",
        help="a loopy kernel's operation, memory-access and synchronisation counts",
        description="KERNEL is a built-in application kernel (matmul-prefetch, "
        "matmul-noprefetch, dg-plain, dg-prefetch-u, dg-prefetch-dm, dg-prefetch-dm-tr, "
        "fd-16x16, fd-18x18) or a .py file defining 'kernel' (a loopy kernel) or "
        "'make_kernel()' returning one. Counts are symbolic in the problem sizes; "
        "--problem evaluates them.",
    )
    p.add_argument(
        "kernel", metavar="KERNEL", help="a built-in application kernel or a .py file (above)"
    )
    add_problem(p)
    add_config(p)
    p.add_argument(
        "--subgroup-size", type=count, default=32, help="work-items per sub-group (default 32)"
    )
    p.add_argument("--feature", nargs="+", action="extend", default=[], metavar="NAME",
                   help="also evaluate these features, e.g. f_op_float32_madd")  # fmt: skip
    p.add_argument("--no-cache", action="store_true", help="count again, ignoring the cache")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_stats)
    _add_collect(model_sub)
    add_parsers(model_sub)
    add_evaluate(model_sub)


def run_stats(args: argparse.Namespace, console: Console) -> int:
    from perfport import model
    from perfport.model.loopy_file import load_kernel

    sizes = _sizes(args.problem)
    program = load_kernel(args.kernel, args.config, sizes)
    cache = model.StatsCache(None if args.no_cache else _cache_folder())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loopy's notes are kept in the stats' approximations
        stats = cache.stats(program, args.subgroup_size)
    sizes = with_defaults(args, stats, sizes)
    features = model.FeatureSet()
    for name in args.feature:
        features.check(name)
    evaluated = checked(stats, sizes) if sizes or not stats.params else None
    if args.feature and evaluated is None:  # a feature is a count at a size, not a formula
        raise PerfportError(
            f"--feature is evaluated at a size: give --problem {stats.params[0]}=... too"
        )
    report = stats_report(stats, evaluated, args.feature, features)
    if args.json:
        render.print_json(report)
    else:
        _print_report(console, report)
    return 0


def stats_report(
    stats: KernelStats, evaluated: EvaluatedStats | None, extra: list[str], features: Any
) -> dict[str, Any]:
    """The statistics as JSON: each count symbolic and, with sizes, its value."""
    values: dict[str, Any] = {}
    if evaluated is not None:
        for name in [*_named_features(stats), *extra]:
            values[name] = features.value(name, evaluated)
    ops = evaluated.ops if evaluated else [(o, None) for o in stats.ops]
    mem = evaluated.mem if evaluated else [None] * len(stats.mem)
    return {
        "kernel": stats.kernel,
        "params": list(stats.params),
        "sizes": dict(evaluated.sizes) if evaluated else None,
        "subgroup_size": stats.subgroup_size,
        "exact": not stats.approximations,
        "approximations": list(stats.approximations),
        "ops": [
            {
                "dtype": o.dtype,
                "op": o.op,
                "granularity": o.granularity.value,
                "symbolic": o.count,
                "value": v,
            }
            for o, v in ops
        ],
        "mem": [_mem_json(pattern, e) for pattern, e in zip(stats.mem, mem, strict=True)],
        "sync": [
            {
                "kind": s.kind.value,
                "symbolic": s.count,
                "value": dict(evaluated.sync).get(s.kind) if evaluated else None,
            }
            for s in stats.sync
        ],
        "thread_groups": {
            "symbolic": stats.thread_groups,
            "value": evaluated.thread_groups if evaluated else None,
        },
        "work_group_size": {
            "symbolic": stats.work_group_size,
            "value": evaluated.work_group_size if evaluated else None,
        },
        "assumptions": stats.guard,
        "features": values,
    }


def _mem_json(m: Any, e: Any) -> dict[str, Any]:
    """A memory access count, symbolic (as the cache stores it) and evaluated (``e``)."""
    from perfport.model.counts import mem_json

    row = mem_json(m)
    symbolic = row.pop("count")
    return {
        **row,
        "symbolic": symbolic,
        "footprint": m.footprint or None,
        "value": e.count if e else None,
        "lstrides_value": {str(a): v for a, v in e.lstrides.items()} if e else None,
        "gstrides_value": {str(a): v for a, v in e.gstrides.items()} if e else None,
        "afr": e.afr if e else None,
        # As the compiler issues them (loop-invariant local loads hoisted; hoist.py).
        "issued_value": e.issued if e else None,
    }


def _named_features(stats: KernelStats) -> list[str]:
    """The built-in feature of every kind of count the kernel has, by its paper name."""
    names = [f"f_op_{o.dtype}_{o.op}" for o in stats.ops]
    for m in stats.mem:
        names.append(f"f_mem_access_{m.mtype}_{m.dtype}_{m.direction}")
        names += [f"f_mem_access_tag:{t}" for t in m.tags]
    names += [f"f_sync_{s.kind.value}" for s in stats.sync]
    return [*dict.fromkeys(names), "f_thread_groups"]


def _print_report(console: Console, report: dict[str, Any]) -> None:
    from rich.text import Text

    sizes = report["sizes"]
    shown = ", ".join(f"{k}={v}" for k, v in sizes.items()) if sizes else "symbolic"
    console.print(Text(report["kernel"], "bold"), f"({shown}; sub-group {report['subgroup_size']})")

    def line(what: str, symbolic: str, value: Any) -> None:
        at = "" if value is None else f" = {value:g}"
        console.print(f"  {what}: {symbolic}{at}", highlight=False, markup=False)

    for o in report["ops"]:
        line(f"op {o['dtype']} {o['op']} per {o['granularity']}", o["symbolic"], o["value"])
    for m in report["mem"]:
        strides = f"lstrides {m['lstrides_value'] or m['lstrides']} gstrides {m['gstrides_value'] or m['gstrides']}"
        afr = f" afr {m['afr']:g}" if m["afr"] is not None else ""
        what = f"{m['mtype']} {m['dtype']} {m['direction']} {m['variable']} {strides}{afr}"
        line(f"mem {what} per {m['granularity']}", m["symbolic"], m["value"])
    for s in report["sync"]:
        line(f"sync {s['kind']}", s["symbolic"], s["value"])
    line("thread groups", report["thread_groups"]["symbolic"], report["thread_groups"]["value"])
    for note in report["approximations"]:
        console.print(f"  approximation: {note}", highlight=False, markup=False)
    if report["features"]:
        console.print("  features:")
        for name, value in report["features"].items():
            console.print(f"    {name} = {value:g}", highlight=False, markup=False)


# The generators' group tags (tests/model/test_model_collect.py checks them against the
# registry, which --help does not import: it would import numpy and loopy).
GENERATOR_TAGS = ("flops", "gmem", "gstore", "lmem", "lmem_stride", "lmem_hoist", "gmem_tile",
                  "sync", "overlap", "work_removal", "work_removal_barriers")  # fmt: skip


def _add_collect(model_sub: Any) -> None:
    p = model_sub.add_parser(
        "collect",
        help="measure a measurement-kernel collection (UIPiCK) on a device into the store",
        description=f"--filter takes generator tags ({', '.join(GENERATOR_TAGS)}, or a "
        "generator's name: --list shows them) and variant tags arg:v1,v2 (dtype:float32, "
        "nel:65536; nel a multiple of the work-group size lsize_0, and at least it). Kernels "
        "already measured on the device are taken from the store, so a rerun measures only "
        "what is missing.",
    )
    p.add_argument("--device", help="device id (default: the default device)")
    p.add_argument("--filter", nargs="+", action="extend", default=[], metavar="TAG",
                   help="filter tags (default: every generator)")  # fmt: skip
    p.add_argument("--match", choices=["identical", "subset", "superset", "intersect"],
                   default="superset", help="how generator tags match (default superset)")  # fmt: skip
    p.add_argument("--db", type=database, default="perfport.db", help="the results database")
    p.add_argument("--list", action="store_true", help="list the kernels, measure nothing")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_collect)


def run_collect(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import get_device
    from perfport.model.collection import KernelCollection, MatchCondition
    from perfport.model.generators import all_generators, device_scale

    device = get_device(args.device)
    scale = device_scale(device.compute_units, device.type.value == "gpu")
    collection = KernelCollection(all_generators(scale), MatchCondition(args.match))
    variants = collection.variants(args.filter)
    if not variants:
        raise PerfportError(
            f"no generator matches {' '.join(args.filter)} ({args.match}); known generators: "
            f"{', '.join(g.name for g in collection.generators)}"
        )
    if args.list:
        rows = [{"generator": g.name, "args": dict(a)} for g, a in variants]
        if args.json:
            render.print_json({"device": device.id, "scale": scale, "kernels": rows})
        else:
            for g, a in variants:
                console.print(f"{g.name} {a}", highlight=False, markup=False)
        return 0
    return _collect(args, console, device, variants)


def _collect(args: argparse.Namespace, console: Console, device: Any, variants: Any) -> int:
    from perfport.model.measure import CollectStatus, collect

    def show(r: Any) -> None:
        if not args.json:
            at = f"{r.time_ms:.4g} ms" if r.time_ms is not None else r.message
            console.print(f"{r.status.value:8} {r.generator} {r.args}: {at}", highlight=False,
                          markup=False)  # fmt: skip

    results = collect(variants, device, args.db, on_result=show)
    counts = {s.value: sum(r.status is s for r in results) for s in CollectStatus}
    if args.json:
        render.print_json(
            {
                "device": device.id,
                "device_fingerprint": device.fingerprint,
                "db": str(args.db),
                "counts": counts,
                "results": [r.to_json() for r in results],
            }
        )
    else:
        console.print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if counts[CollectStatus.FAILED.value] and len(results) == counts[CollectStatus.FAILED.value]:
        # as 'model measure': nothing to calibrate on is a failed run, not a success
        print("perfport: no kernel of the collection could be measured; the messages above say "
              "why", file=sys.stderr)  # fmt: skip
        return 1
    return 0
