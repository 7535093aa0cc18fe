"""``perfport tune`` and ``perfport sweep``: measure a kernel's configurations on a device."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import perfport
from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    add_problem,
    budget,
    cluster_address,
    confirm_count,
    count,
    database,
    natural,
    problem_values,
    repeats,
    seconds,
)
from perfport.cli.confirmation import confirmation_line

# perfport.tune.confirm's defaults, repeated here so that building the parser imports no layer
# (tests/tune/test_confirm.py checks they agree).
CONFIRM_TOP, CONFIRM_SECONDS = 3, 5.0

if TYPE_CHECKING:
    from rich.console import Console

    from perfport.measure import RunSettings
    from perfport.tune import Budget, SweepProgress


def add_parser(sub: Subcommands) -> None:
    _add_tune(sub)
    _add_sweep(sub)


def _add_tune(sub: Subcommands) -> None:
    p = sub.add_parser("tune", help="tune a kernel and store every measurement")
    p.add_argument(
        "kernel",
        metavar="KERNEL",
        help="built-in name (see 'perfport kernels'), spec file (.py/.toml/.yaml), loopy space "
        "file (.py defining program(config): docs/model.md) or stencil description (.json)",
    )
    add_problem(p)
    p.add_argument(
        "--device", action="append", metavar="ID",
        help="device id (see 'perfport devices'); default: a GPU if any, else the CPU. Repeat "
        "it, or give 'all', to tune on several devices at once (docs/cluster.md)",
    )  # fmt: skip
    p.add_argument(
        "--cluster", metavar="ADDRESS|local", type=cluster_address,
        help="send trials to the Dask workers of this scheduler ('perfport worker'), or to a "
        "local cluster of one worker process per --device (needs perfport[cluster])",
    )  # fmt: skip
    _add_search(p)
    p.add_argument(
        "--budget", type=budget, metavar="N|P%",
        help="at most N configurations in the campaign, or P%% of the device's legal space "
        "(e.g. 25%%, rounded up)",
    )  # fmt: skip
    p.add_argument(
        "--max-time", type=seconds, metavar="SECONDS", help="stop this session after this long"
    )
    p.add_argument(
        "--db", type=database, default="perfport.db", help="results database (default: perfport.db)"
    )
    p.add_argument(
        "--campaign", help="campaign key; the same key resumes (default: derived from the run)"
    )
    p.add_argument(
        "--build-jobs", type=count, default=0, metavar="N",
        help="compile the builds the budget reaches ahead in N processes (fixed-order strategies, --configs)",
    )  # fmt: skip
    p.add_argument("--seed", type=natural, default=0, help="seed for input data and the strategy")
    p.add_argument(
        "--repeats", type=repeats, help="fixed number of timed launches (default: adaptive)"
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
        help="kill a launch that runs longer than this (default 30)",
    )
    p.add_argument("--no-verify", action="store_true", help="do not check outputs")
    p.add_argument(
        "--retry-failed", action="store_true",
        help="measure again configurations that crashed or timed out in an earlier campaign "
        "of the same kernel, device and problem (default: store that outcome again)",
    )  # fmt: skip
    p.add_argument(
        "--min-work-groups", action="store_true", help="soft rule: work-groups >= compute units"
    )
    p.add_argument(
        "--objective", metavar="NAME[:max|:min]",
        help="what the strategy optimises and the best is chosen by: time (default) or a "
        "metric of the spec (GBps, GFLOPs, its own); time minimises, a metric maximises unless told",
    )  # fmt: skip
    p.add_argument(
        "--confirm", type=confirm_count, default=CONFIRM_TOP, metavar="N",
        help=f"at the end, re-time the N best configurations (by --objective: the fastest by "
        f"default) side by side until their intervals separate (default {CONFIRM_TOP}; 0: do not; "
        f"else at least 2)",
    )  # fmt: skip
    p.add_argument(
        "--confirm-seconds", type=seconds, default=CONFIRM_SECONDS, metavar="SECONDS",
        help=f"time limit of that re-timing (default {CONFIRM_SECONDS:g})",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run_tune)


def _add_search(p: argparse.ArgumentParser) -> None:
    """How ``tune`` chooses what to measure: a strategy (with its calibration) or a list."""
    p.add_argument("--strategy", help="search strategy (see 'perfport strategies')")
    p.add_argument(
        "--calibration", metavar="FILE",
        help="for --strategy model_guided: a calibration of the device ('perfport model "
        "calibrate ... --out FILE'); loopy kernels only (loopy-matmul, loopy-dg, loopy-fd, "
        "or a .py loopy space file: docs/model.md)",
    )  # fmt: skip
    p.add_argument(
        "--configs", metavar="FILE",
        help="measure exactly these configurations instead of searching: a JSON list of "
        "parameter dicts, or an object with 'configs' ('perfport select portable --json')",
    )  # fmt: skip


def _add_sweep(sub: Subcommands) -> None:
    p = sub.add_parser(
        "sweep", help="measure every configuration at each of many problems (in process)"
    )
    p.add_argument("kernel", metavar="KERNEL", help="built-in name or spec file")
    p.add_argument(
        "--problems",
        required=True,
        metavar="FILE|SET",
        help="CSV with a header of problem names, or a shipped set: lawson-gemm",
    )
    p.add_argument("--device", help="device id; default: a GPU if any, else the CPU")
    p.add_argument(
        "--db", type=database, default="perfport.db", help="results database (default: perfport.db)"
    )
    p.add_argument(
        "--max-time", type=seconds, metavar="SECONDS", help="start no problem after this"
    )
    p.add_argument("--first", type=count, metavar="N", help="only the first N problems")
    p.add_argument(
        "--rounds",
        type=count,
        default=1,
        help="measure every configuration this many times, interleaved (default 1)",
    )
    p.add_argument("--no-verify", action="store_true", help="do not check outputs")
    p.add_argument("--json", action="store_true", help="print JSON lines, one per problem")
    p.set_defaults(run=run_sweep)


def run_tune(args: argparse.Namespace, console: Console) -> int:
    from perfport._core.interrupts import guarded
    from perfport.cli.guided import check_arguments
    from perfport.measure import RunSettings, Timing
    from perfport.tune import Budget

    check_arguments(args)
    timing = Timing.fixed(args.repeats) if args.repeats else Timing()
    settings = RunSettings(
        seed=args.seed, verify=not args.no_verify, timing=timing, timeout_s=args.timeout
    )
    # Held from here (perfport.tune stops where it is safe): an interrupt after the campaign's
    # final status is stored is too late to stop anything, and the result is still printed.
    with guarded():
        share = isinstance(args.budget, float)  # "25%" parsed as 0.25
        budget = Budget(
            None if share else args.budget, args.max_time, args.budget if share else None
        )
        devices = args.device or []
        if args.cluster or len(devices) > 1 or "all" in devices:
            from perfport.cli.tune_many import tune_many_and_report

            return tune_many_and_report(args, console, settings, budget)
        return _tune_and_report(args, console, settings, budget)


def _tune_and_report(
    args: argparse.Namespace, console: Console, settings: RunSettings, budget: Budget
) -> int:
    from perfport._core.interrupts import take_held
    from perfport.cli.tune_many import exit_status, interrupted_note
    from perfport.tune.prior import skipped_note
    from perfport.tune.prior_objective import time_ranked_note
    from perfport.tune.progress import Board

    kernel, device, ranker = _kernel_device_ranker(args)
    # A live row on a terminal; elsewhere plain lines, one a second at most and the last.
    with Board() as board:
        result = perfport.tune(
            kernel,
            problem=problem_values(args.problem),
            device=device,
            strategy=args.strategy,
            budget=budget,
            db=args.db,
            campaign=args.campaign,
            settings=settings,
            progress=board.lane(args.device[0] if args.device else ""),
            min_work_groups=args.min_work_groups,
            configs=_read_configs(args.configs) if args.configs else None,
            build_jobs=args.build_jobs,
            objective=args.objective,
            warn=lambda text: print(f"warning: {text}", file=sys.stderr, flush=True),
            retry_failed=args.retry_failed,
            confirm_top=args.confirm,
            confirm_seconds=args.confirm_seconds,
            ranker=ranker,
        )
    if args.json:
        render.print_json(result.to_json())
    else:
        render.tune_report(console, result)
        if result.confirmed is not None:
            console.print(confirmation_line(result.confirmed, result.best), highlight=False)
    for warning in result.warnings:  # on stderr, so --json output stays one document
        print(f"warning: {warning}", file=sys.stderr)
    if note := skipped_note(result.prior_skipped):
        print(f"note: {note}", file=sys.stderr)
    if note := time_ranked_note(result.objective, result.prior_by_time):
        print(f"note: {note}", file=sys.stderr)
    if note := interrupted_note(result):
        print(f"note: {note}", file=sys.stderr)
    take_held()
    return exit_status([result])


def _kernel_device_ranker(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The kernel (a loopy kernel's spec is built here, above the tune layer), the device, and
    model_guided's ranker builder (None for other strategies)."""
    from perfport.cli import guided

    device = args.device[0] if args.device else None
    if not guided.is_loopy(args.kernel):
        return args.kernel, device, None
    from perfport.devices import get_device

    spec, searched = guided.loopy_kernel(args.kernel)
    info = get_device(device, spec.language)
    guide = args.strategy == guided.GUIDED
    ranker = guided.ranker_factory(args, spec, searched, info) if guide else None
    return spec, info, ranker


def _read_configs(path: str) -> list[dict[str, Any]]:
    """A JSON list of configurations, or an object holding one under 'configs'."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise PerfportError(f"--configs {path}: cannot be read ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PerfportError(f"--configs {path}: not JSON ({exc})") from None
    configs = data.get("configs") if isinstance(data, dict) else data
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise PerfportError(
            f"--configs {path}: give a list of parameter dicts, or an object with 'configs' "
            "such as 'perfport select portable --json' prints"
        )
    return configs


def run_sweep(args: argparse.Namespace, console: Console) -> int:
    from perfport.kernels import load_problems
    from perfport.measure import RunSettings
    from perfport.tune import SWEEP_TIMING, SweepInterrupted, sweep

    problems = load_problems(args.problems)[: args.first]
    settings = RunSettings(verify=not args.no_verify, timing=SWEEP_TIMING)
    steps = sweep(
        args.kernel, problems, device=args.device, db=args.db, settings=settings,
        max_seconds=args.max_time, rounds=args.rounds,
    )  # fmt: skip
    failing = 0  # problems where no configuration ran correctly
    n = 0
    try:
        for n, step in enumerate(steps, 1):
            ran = sum(v for k, v in step.outcomes.items() if k != "pruned")
            # From the store, whoever measured it (a rerun, or another sweep of the store).
            failing += step.best_ms is None and ran > 0  # none legal: nothing ran
            _sweep_line(args, console, f"{n}/{len(problems)}", step)
    except SweepInterrupted as stop:  # reported as 'tune --json' reports one; exit 130
        _sweep_line(args, console, f"{n + 1}/{len(problems)}", stop.progress)
        raise
    _sweep_end(args, console, problems[n:], failing)
    return 1 if failing else 0


def _sweep_line(args: argparse.Namespace, console: Console, at: str, step: SweepProgress) -> None:
    """One problem of a sweep: a JSON line, or a line of text (saying when it was stopped)."""
    if args.json:
        print(json.dumps({"problem": dict(step.problem), "campaign": step.campaign,
                          "measured": step.measured, "outcomes": step.outcomes,
                          "best_ms": step.best_ms, "seconds": round(step.seconds, 2),
                          "status": step.status.value}), flush=True)  # fmt: skip
        return
    failed = {k: v for k, v in step.outcomes.items() if v and k != "ok"}
    best = f"{step.best_ms:.4g} ms" if step.best_ms is not None else "no result"
    stopped = f"{step.status.value}, " if step.status.value != "complete" else ""
    console.print(
        f"[{at}] {step.problem.key}: {stopped}{step.measured} measured, best {best} "
        f"({step.seconds:.1f} s) {failed or ''}"
    )


def _sweep_end(
    args: argparse.Namespace, console: Console, skipped: list[dict[str, Any]], failing: int
) -> None:
    """What a sweep left: the problems --max-time kept it from starting (the sweep stops only
    there), which the same command resumes; and the problems where nothing ran correctly."""
    if skipped and args.json:  # as 'wg collect' reports its skipped scenarios
        print(json.dumps({"skipped": skipped, "why": "--max-time"}), flush=True)
    elif skipped:
        console.print(
            f"--max-time reached: {len(skipped)} problem(s) not measured "
            "(run the same command again to resume)"
        )
    if failing and not args.json:
        console.print(f"no configuration ran correctly at {failing} problem(s) (exit status 1)")
