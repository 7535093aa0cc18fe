"""``perfport tune`` on several devices (``--device A --device B``, ``--device all``) or on
Dask workers (``--cluster``): one campaign per kind of device, every result in one store."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from functools import partial
from typing import TYPE_CHECKING

from perfport._core import PerfportError
from perfport.cli import render

if TYPE_CHECKING:
    from rich.console import Console

    from perfport.measure import RunSettings
    from perfport.tune import Budget, TuneResult
    from perfport.tune.multi import Slot


def tune_many_and_report(
    args: argparse.Namespace, console: Console, settings: RunSettings, budget: Budget
) -> int:
    from perfport._core.interrupts import take_held
    from perfport.cli.arguments import problem_values
    from perfport.cli.confirmation import confirmation_line
    from perfport.tune.multi import tune_many
    from perfport.tune.prior import skipped_note
    from perfport.tune.progress import Board

    for flag, given in (("--configs", args.configs), ("--campaign", args.campaign),
                        ("--objective", args.objective),
                        ("--retry-failed", args.retry_failed)):  # fmt: skip
        if given:
            raise PerfportError(
                f"{flag} works with one --device; give one device, or leave {flag} out"
            )
    if args.build_jobs and args.cluster:
        # The builds would be compiled here, not in the Dask workers' caches that need them.
        raise PerfportError(
            "--build-jobs does not work with --cluster (the workers compile on their own "
            "hosts); leave --build-jobs out, or tune local devices with --device"
        )
    run = partial(
        tune_many, args.kernel, problem=problem_values(args.problem),
        strategy=args.strategy, budget=budget, db=args.db, settings=settings, board=Board(),
        min_work_groups=args.min_work_groups, build_jobs=args.build_jobs,
        confirm_top=args.confirm, confirm_seconds=args.confirm_seconds,
    )  # fmt: skip
    if args.cluster:
        results = _on_cluster(args, run)
    else:
        results = run(_local_slots(args.device, args.kernel))
    if args.json:
        render.print_json({"campaigns": [r.to_json() for r in results]})
    else:
        for r in results:
            render.tune_report(console, r)
            if r.confirmed is not None:
                console.print(confirmation_line(r.confirmed, r.best), highlight=False)
    for r in results:
        for warning in r.warnings:
            print(f"warning: {r.device.id}: {warning}", file=sys.stderr)
        if note := skipped_note(r.prior_skipped):
            print(f"note: {r.device.id}: {note}", file=sys.stderr)
        if note := interrupted_note(r):
            print(f"note: {r.device.id}: {note}", file=sys.stderr)
    take_held()
    return exit_status(results)


def exit_status(results: list[TuneResult]) -> int:
    """130 if any campaign or session was interrupted (also after its search ended, when the
    campaign keeps its status); 1 if on any device configurations ran and none of
    them correctly (every one a compile error, a crash, a wrong result...), so that a script
    can tell; else 0. Bad input never gets here: it exits 2 before anything is measured, or,
    found once the sessions run, once every device's session has stopped (``tune_many``)."""
    from perfport.store import CampaignStatus

    if any(r.status is CampaignStatus.INTERRUPTED or r.interrupted for r in results):
        return 130
    return 1 if any(r.measurements and r.best is None for r in results) else 0


def interrupted_note(result: TuneResult) -> str:
    """Why a session that Ctrl-C stopped left its campaign's status as it was: the interrupt
    came after the search ended, or before it began; "" otherwise."""
    from perfport.tune.result import Stage

    stage, status = result.interrupted, result.status.value
    if stage is None or stage is Stage.SEARCH or not result.status.finished:
        return ""
    if stage is Stage.START:
        return (f"interrupted before the search began (nothing measured): the campaign keeps "
                f"its status {status}")  # fmt: skip
    during = ", during the re-timing (its samples so far are stored)" * (stage is Stage.CONFIRM)
    return f"interrupted after the search ended{during}: the campaign keeps its status {status}"


def _on_cluster(args: argparse.Namespace, run: partial[list[TuneResult]]) -> list[TuneResult]:
    from perfport.tune.cluster import DaskMeasurer, cluster_slots, connect

    ids = [i for i in args.device or [] if i != "all"]
    local = args.cluster == "local"
    devices = [s.device for s in _local_slots(args.device or [None], args.kernel)] if local else []
    with connect(args.cluster, devices) as client:
        slots = cluster_slots(client, () if local else ids)
        return run(slots, make_measurer=partial(DaskMeasurer, client))


def _local_slots(ids: list[str | None], kernel: str) -> list[Slot]:
    """A slot per given device id (``all``: every device here that runs the kernel's
    language); an id given twice is two slots on one device (e.g. a CPU's worker processes)."""
    from perfport.devices import named_devices
    from perfport.kernels import resolve_kernel
    from perfport.tune.multi import Slot

    devices = named_devices(ids, resolve_kernel(kernel).language)
    seen: Counter[str] = Counter()
    slots = []
    for d in devices:
        seen[d.id] += 1
        slots.append(Slot(d, d.id if seen[d.id] == 1 else f"{d.id}#{seen[d.id]}"))
    return slots
