"""``perfport split``: one kernel's NDRange across several devices (erdem2018)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    add_problem,
    database,
    integer_up_to,
    problem_values,
)

if TYPE_CHECKING:
    from rich.console import Console

    from perfport._core import DeviceInfo, KernelSpec, Problem
    from perfport.store import Store

MAX_ROUNDS = 1000  # --sweep points and --iterations: more only takes longer, never says more


def _verified(out: dict[str, Any]) -> str:
    """The run's ``verified``, and why it is false when nothing was compared (tune's words)."""
    if out["verification"] == "unverified":
        return "False (not verified: every output is ignored)"
    return str(out["verified"])


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "split",
        help="run one kernel across several devices, each part with its own configuration",
    )
    p.add_argument("kernel", metavar="KERNEL", help="built-in name or kernel spec file")
    p.add_argument(
        "--device", action="append", default=[], required=True,
        help="a device id; give two or more (on one CPU: opencl:0:0.0 --device opencl:0:0.1)",
    )  # fmt: skip
    add_problem(p)
    p.add_argument(
        "--dimension", type=int, help="NDRange dimension to split (default: the first declared)"
    )
    p.add_argument(
        "--db", type=database, default="perfport.db",
        help="results database: best configurations are read from it, the plan stored in it "
        "(default: perfport.db)",
    )  # fmt: skip
    p.add_argument(
        "--iterations", type=integer_up_to(MAX_ROUNDS, "each one launches the whole split"),
        default=0,
        help="rebalance over up to N launches from the measured part times (the planned run "
        "is the first); stops once the parts finish within 3%% of each other",
    )  # fmt: skip
    p.add_argument(
        "--sweep",
        type=integer_up_to(
            MAX_ROUNDS, "each point runs the whole split", 2,
            "points (the shares 0 and 1 are the first two)",
        ),
        default=None, metavar="POINTS",
        help="also run the split at POINTS evenly spaced shares of the first device (two "
        "devices), to set the computed split against the best one",
    )  # fmt: skip
    p.add_argument(
        "--steps", type=int, default=None, metavar="N",
        help="time-stepping: N steps, each step's output the next one's input (kernels whose "
        "split declares feeds, e.g. the stencils by rows); parts keep their data on their "
        "devices and exchange halo rows between steps",
    )  # fmt: skip
    p.add_argument(
        "--rebalance", action="store_true",
        help="with --steps: re-split between steps from the measured part times, moving the "
        "rows that change owner between devices",
    )  # fmt: skip
    p.add_argument(
        "--cpu-reserve", type=int, default=None, metavar="K",
        help="run a CPU's part on a sub-device that leaves K of its cores free for the GPU "
        "drivers' host threads (default: one per GPU in the split, none without a GPU)",
    )  # fmt: skip
    p.add_argument(
        "--halo", choices=("device", "host"), default="device",
        help="with --steps: exchange halo rows device to device where the devices allow it "
        "(one OpenCL context per platform, CUDA peer copies; default), or through the host",
    )  # fmt: skip
    p.add_argument(
        "--plan", choices=("eq4", "lines"), default=None,
        help="how the first split is planned: lines (default), the devices first run their "
        "Eq. 4 parts together (one probe launch) and the split is planned from each one's "
        "overhead + cost per element line; or eq4, from each device's time alone",
    )  # fmt: skip
    p.add_argument(
        "--times", choices=("measured", "store", "model"), default="measured",
        help="each device's time for the plan: measured (default), the whole problem alone on "
        "every device; store, its chosen configuration's time from 'perfport tune' in --db; "
        "model, the roofline's time from its ceilings in --db ('perfport roofline'). With "
        "store or model only the device of the smallest time runs alone (the reference)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_split)


def run_split(args: argparse.Namespace, console: Console) -> int:
    """``perfport split``; a part that does not build or launch on its device exits 1 in one
    line, as ``perfport tune`` exits 1 when nothing ran correctly (not 2: no bad input)."""
    from perfport.split.execute import PartFailed

    try:
        return _split(args, console)
    except PartFailed as exc:
        print(f"perfport: error: {exc}", file=sys.stderr)  # one printable line
        return 1


def _check_options(args: argparse.Namespace) -> None:
    """Refuse options that do not go together, or values none of the split's paths take,
    naming what was given (before any spec is read or database opened)."""
    from perfport._core import SpecError

    if args.iterations < 0:
        raise SpecError(f"--iterations {args.iterations}: give 1 or more (0: no rebalancing)")
    if args.sweep is not None and len(args.device) != 2:
        raise SpecError(
            f"--sweep shares the split between exactly two devices, and {len(args.device)} "
            "were given; give --device twice"
        )
    if len(args.device) < 2:
        raise SpecError("a split needs two or more devices; give --device twice")
    # 0 is refused, not read as "not given": --steps 0 ran a one-launch split instead.
    if args.steps is not None and args.steps < 1:
        raise SpecError(f"--steps {args.steps}: give 1 or more time steps")
    clash = [
        f
        for f, on in (("--sweep", args.sweep is not None), ("--iterations", args.iterations))
        if on
    ]
    if args.steps is not None and clash:
        raise SpecError(
            f"--steps does not combine with {' or '.join(clash)} (time-stepping rebalances "
            f"with --rebalance); drop {' and '.join(clash)}, or --steps"
        )
    if args.rebalance and not args.steps:
        raise SpecError("--rebalance re-splits between time steps; give --steps N with it")
    if args.plan == "lines" and args.steps:
        raise SpecError("--plan lines plans one launch; time-stepping plans with Eq. 4 (drop "
                        "--plan)")  # fmt: skip
    if args.halo != "device" and not args.steps:
        raise SpecError("--halo chooses the time steps' halo exchange; give --steps N with it")
    if args.times != "measured" and args.steps:
        raise SpecError(f"--times {args.times} plans one launch; time-stepping measures each "
                        "device alone (drop --times)")  # fmt: skip


def _split(args: argparse.Namespace, console: Console) -> int:
    from perfport._core import SpecError

    _check_options(args)
    from perfport.devices import get_device
    from perfport.kernels import resolve_kernel
    from perfport.split.reserve import cpu_opening
    from perfport.split.split import choose_config, split_dimension, split_run
    from perfport.store import Store
    from perfport.tune import resolve_problem

    spec = resolve_kernel(args.kernel)
    problem = resolve_problem(spec, problem_values(args.problem))
    devices = [get_device(d, spec.language) for d in args.device]
    # Refused before the database is opened, so bad input leaves it as it was.
    split_dimension(spec, args.dimension)
    if len({d.id for d in devices}) != len(devices):
        raise SpecError("give each device once; on one CPU use its sub-devices opencl:0:0.0 ...")
    for d in devices:
        choose_config(spec, problem, d, None, args.kernel)
    args.opening = cpu_opening(devices, args.cpu_reserve, share_context=args.halo == "device")
    if args.times != "measured" and not Path(args.db).exists():
        raise SpecError(f"--times {args.times} reads {args.db}, which does not exist; run "
                        f"{_fill_db(args, devices, problem)} first")  # fmt: skip
    if args.steps:
        return _run_steps(args, console, spec, problem, devices)
    with _existing(args.db) as store:
        outcome = split_run(
            spec, problem, devices, args.dimension, store,
            sweep_points=args.sweep or 0, iterations=args.iterations, opening=args.opening,
            plan_from=args.plan or "lines", time_source=args.times, kernel_arg=args.kernel,
        )  # fmt: skip
    with Store(args.db) as store:
        out = _stored(store, spec, problem, devices, outcome)
    if args.json:
        render.print_json(out)
        return 0
    for c in out["configs"]:
        console.print(f"{c['device']}: {c['config']} ({c['source']}), {_time_text(c)}")
    _print_plan(console, out)
    console.print(
        f"theoretical {out['theoretical_ms']:.3f} ms, measured {out['measured_ms']:.3f} ms, "
        f"best single {out['best_single']['device']} {out['best_single']['time_ms']:.3f} ms "
        f"(x{out['speedup_over_best_single']:.2f}); verified: {_verified(out)}"
    )
    _print_buffers(console, out["buffers"])
    for p in out["sweep"]:
        console.print(
            f"sweep: first device {p['share']:.2f} -> {p['measured_ms']:.3f} ms"
            + ("" if p["verified"] or p["verification"] == "unverified" else " (wrong output)")
        )
    for k, i in enumerate(out["iterations"], 1):
        console.print(
            f"launch {k}: parts {i['parts']}, {i['measured_ms']:.3f} ms, "
            f"imbalance {100 * i['imbalance']:.1f}%"
        )
    _print_cpu_parts(console, out)
    console.print(f"decision: {out['decision']} (plan {out['plan_id']} stored in {args.db})")
    return 0


@contextmanager
def _existing(db: str) -> Iterator[Store | None]:
    """The results database to read configurations and times from while the split runs:
    None where it does not exist (nothing to read), so a split that fails leaves no empty
    database behind; the plan is stored once the split has run."""
    from perfport.store import Store

    if not Path(db).exists():
        yield None
        return
    with Store(db) as store:
        yield store


def _fill_db(args: argparse.Namespace, devices: list[DeviceInfo], problem: Problem) -> str:
    """The commands that store what ``--times store|model`` reads, one per device."""
    from perfport.split.times import problem_args

    db = shlex.quote(args.db)
    if args.times == "model":
        runs = [f"'perfport roofline --device {d.id} --db {db}'" for d in devices]
    else:
        kernel, given = shlex.quote(args.kernel), problem_args(problem)
        runs = [
            f"'perfport tune {kernel} --device {d.id} --problem {given} --db {db}'" for d in devices
        ]
    return " and ".join(runs)


def _time_text(c: dict[str, Any]) -> str:
    """A device's time as the plan took it, and its time alone where that was not the same."""
    if c["time_source"] == "measured":
        return f"alone {c['time_ms']:.3f} ms"
    ran = "" if c["alone_ms"] is None else f", alone {c['alone_ms']:.3f} ms"
    return f"{c['time_source']} {c['time_ms']:.3f} ms{ran}"


def _print_plan(console: Console, out: dict[str, Any]) -> None:
    factors = ", ".join(f"{f:.3f}" for f in out["split_factors"])
    adjusted = ", ".join(f"{f:.3f}" for f in out["adjusted_factors"])
    basis = "the lines' shares" if out["planned_from"] == "lines" else "them"
    console.print(
        f"split factors (Eq. 4) {factors}; {basis} adjusted to whole work-groups {adjusted}"
    )
    if out["planned_from"] == "lines":
        probes = ", ".join("-" if t is None else f"{t:.3f}" for t in out["probe_ms"])
        console.print(
            f"planned from lines: Eq. 4's parts {out['eq4_parts']}, probes {probes} ms, "
            f"ran {out['parts']} (lines predict {out['lines_predicted_ms']:.3f} ms)"
        )


def _print_buffers(console: Console, buffers: dict[str, Any]) -> None:
    if buffers["why"] is None:
        console.print(f"buffers: {buffers['kind']} of one parent per array (one upload each)")
    else:
        console.print(f"buffers: {buffers['kind']} per part ({buffers['why']})")


def _print_cpu_parts(console: Console, out: dict[str, Any]) -> None:
    for c in out["cpu_parts"]:
        console.print(
            f"{c['device']}: its part ran on {c['compute_units']} of {c['of']} compute units "
            f"({out['cpu_reserve']} left free)"
        )


def _stored(
    store: Store, spec: KernelSpec, problem: Problem, devices: list[DeviceInfo], outcome: Any
) -> dict[str, Any]:
    """Store the plan and what was measured; the command's JSON, with the plan's id."""
    from perfport.store.plans import record_plan

    plan_id = record_plan(
        store, spec, problem, devices, outcome.configs, outcome.plan.to_json(), outcome.to_json()
    )
    return {"kernel": spec.name, "problem": dict(problem), **outcome.to_json(), "plan_id": plan_id}


def _run_steps(
    args: argparse.Namespace,
    console: Console,
    spec: KernelSpec,
    problem: Problem,
    devices: list[DeviceInfo],
) -> int:
    """``perfport split --steps N``: N steps split, set against N steps on each device."""
    from perfport.split.stepping import split_steps, step_split
    from perfport.store import Store

    step_split(spec, problem, args.dimension)  # refused before the database is opened
    with _existing(args.db) as store:
        outcome = split_steps(
            spec, problem, devices, args.steps, args.dimension, store,
            rebalance=args.rebalance, opening=args.opening, kernel_arg=args.kernel,
        )  # fmt: skip
    with Store(args.db) as store:
        out = _stored(store, spec, problem, devices, outcome)
    if args.json:
        render.print_json(out)
        return 0
    for c in out["configs"]:
        console.print(
            f"{c['device']}: {c['config']} ({c['source']}), {args.steps} steps alone "
            f"{c['time_ms']:.3f} ms ({c['step_ms']:.3f} ms a step)"
        )
    console.print(
        f"split {out['parts']} -> {out['final_parts']}: {out['measured_ms']:.3f} ms "
        f"({out['step_ms']:.3f} ms a step, halo exchange {out['exchange_ms']:.3f} ms, "
        f"moves {out['moved_ms']:.3f} ms, halo path {out['halo_path']}); best single {out['best_single']['device']} "
        f"{out['best_single']['time_ms']:.3f} ms (x{out['speedup_over_best_single']:.2f}); "
        f"verified: {_verified(out)}"
    )
    _print_buffers(console, out["buffers"])
    _print_cpu_parts(console, out)
    console.print(f"decision: {out['decision']} (plan {out['plan_id']} stored in {args.db})")
    return 0
