"""``perfport replay``: a strategy run against stored measurements, no device needed."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    add_problem,
    count,
    database,
    natural,
    problem_values,
)

if TYPE_CHECKING:
    from rich.console import Console


_OBJECTIVES = {
    "median": "the median of each configuration's repetitions",
    "mean": "the mean of each configuration's repetitions",
    "time": "the mean of the imported file's 'times' (Kernel Tuner's 'time')",
}


def _objective(name: str) -> str:
    """An objective replay has; else why it has no other (argparse's "invalid choice" said
    nothing of a cache's GFLOP/s)."""
    if name in _OBJECTIVES:
        return name
    raise argparse.ArgumentTypeError(
        f"{name[:40]!r} is not one of median, mean and time: replay ranks by the stored times, "
        "and an import keeps a file's times, not its other metrics (such as a Kernel Tuner "
        "cache's GFLOP/s)"
    )


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "replay", help="run a strategy against stored measurements, no device needed"
    )
    p.add_argument(
        "--db",
        type=database,
        default="perfport.db",
        help="results database to replay (default: perfport.db)",
    )
    p.add_argument("--kernel", help="the kernel (name or source-hash prefix)")
    p.add_argument("--device", help="the device (fingerprint or name)")
    add_problem(p)  # a kernel tuned at several sizes: which one to replay
    p.add_argument("--strategy", help="search strategy (default: the default strategy)")
    p.add_argument("--budget", type=count, required=True, help="evaluations per run")
    p.add_argument("--repeats", type=count, required=True, help="runs, each with its own seed")
    p.add_argument("--seed", type=natural, default=0, help="seed of the first run")
    p.add_argument(
        "--objective",
        type=_objective,
        metavar="{median,mean,time}",
        help="the time to rank by: median or mean of the repetitions, or an imported Kernel "
        "Tuner/T4 file's 'time', the mean of its 'times'; default: the source's own (time for "
        "imported files, median for perfport's measurements)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_replay)


def run_replay(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import stored_device
    from perfport.tune.prior import skipped_note
    from perfport.tune.replay import Objective, replay_db

    objective = Objective(args.objective) if args.objective else None
    result = replay_db(
        args.db, args.kernel, stored_device(args.device), args.strategy, args.budget, args.repeats, args.seed,
        objective, problem=problem_values(args.problem),
    )  # fmt: skip
    if note := skipped_note(result.prior_skipped):
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        render.print_json(result.to_json())
    else:
        console.print(
            f"{result.strategy} on {result.data}: {result.repeats} runs of {result.budget} evaluations; "
            f"optimum {result.optimum_ms:.4g} ms, the best of the {result.configurations} "
            "configurations stored"
        )
        console.print(
            f"objective: {result.objective.value} ({_OBJECTIVES[result.objective.value]})"
        )
        if result.prior_sources:
            console.print(f"prior from {result.prior_sources} other device result sets in the db")
        console.print(f"mean fraction of the optimum reached: {result.mean_best_fraction:.3f}")
        for target, evals in result.evals_to.items():
            console.print(
                f"median evaluations to {target:.0%}: {evals if evals is not None else 'not reached'}"
            )
    return 0
