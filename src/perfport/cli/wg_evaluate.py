"""``perfport wg evaluate``: the predictors on a work-group-size dataset, with progress on
stderr and, given the rounds behind the table, held-out scores."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport._core import PerfportError
from perfport._core.optional import require
from perfport.cli import render
from perfport.cli.arguments import check_folder

if TYPE_CHECKING:
    from rich.console import Console

    from perfport import wg
    from perfport.wg.heldout import RoundSamples


def wg_data_path(name: str | None) -> Path:
    """The dataset a --data flag names; the environment may say where shared data lies."""
    from perfport import wg

    return wg.dataset_path(name, os.environ.get("PERFPORT_SHARED_DATA"))


def _listed(
    text: str | None, known: Sequence[str], flag: str, default: Sequence[str] | None = None
) -> list[str]:
    """A comma-separated choice among ``known``, or ``all`` of them; without the flag,
    ``default`` (all of them where there is none)."""
    if text is None:
        return list(known if default is None else default)
    if text.strip() == "all":
        return list(known)
    # A name given twice would be evaluated twice, with the same result.
    wanted = list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    unknown = [t for t in wanted if t not in known]
    if unknown or not wanted:
        what = f"unknown {', '.join(unknown)}" if unknown else "give at least one"
        raise PerfportError(f"{flag}: {what}; choose from all, {', '.join(known)}")
    return wanted


class _EvaluationProgress:
    """On stderr, never stdout (which --json keeps for the answer): a bar on a terminal,
    else a line as the folds reach each method on each partition."""

    def __init__(self) -> None:
        self._bar: Any = None  # a rich Progress, on a terminal
        self._task: Any = None
        self._last: tuple[str, str] | None = None

    def __enter__(self) -> _EvaluationProgress:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        stderr = Console(stderr=True, markup=False)
        if stderr.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TimeRemainingColumn(), console=stderr, transient=True,
            )  # fmt: skip
            self._bar.start()
        return self

    def update(self, step: wg.EvalProgress) -> None:
        what = f"{step.method} on {step.partition}"
        if self._bar is not None:
            if self._task is None:
                self._task = self._bar.add_task(what, total=step.total)
            self._bar.update(self._task, completed=step.done, description=what)
        elif (step.partition, step.method) != self._last and step.done < step.total:
            print(f"perfport: [{step.done}/{step.total} folds] {what}", file=sys.stderr, flush=True)
        self._last = (step.partition, step.method)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def run_evaluate(args: argparse.Namespace, console: Console) -> int:
    from perfport import wg

    check_folder(args.plots, "--plots")
    if args.plots:  # before the evaluation, not once it has run (minutes)
        require("matplotlib", "plots", "--plots")
    if args.split is not None and not args.samples:
        raise PerfportError("--split chooses how --samples rounds are split; give --samples "
                            "FILE too, or leave --split out")  # fmt: skip
    data = wg.load_dataset(wg_data_path(args.data))
    methods = _listed(args.methods, wg.METHODS, "--methods", wg.DEFAULT_METHODS)
    partitions = _listed(args.partitions, wg.PARTITIONS, "--partitions")
    rounds = _rounds_behind(data, args.samples or [])
    with _EvaluationProgress() as progress:
        results = wg.evaluate(data, methods, partitions, seed=args.seed, progress=progress.update)
    skipped = [p for p in partitions if p not in {r.partition for r in results}]
    why = ("a leave-one-out partition needs at least two devices, kernels or data sizes, and "
           "synthetic-real both synthetic and real-world kernels")  # fmt: skip
    if not results:
        raise PerfportError(f"no partition of {', '.join(partitions)} can be evaluated on this "
                            f"data: {why}")  # fmt: skip
    if skipped:
        print(f"perfport: skipped {', '.join(skipped)}: {why}", file=sys.stderr)
    if args.plots:
        from perfport.wg import plots  # matplotlib: only for --plots

        plots.save_figures(data, results, args.plots)
    held = [_heldout(data, r, rounds, args.split or "halves", args.seed) for r in results]
    if args.json:
        render.print_json({"results": [r.to_json(per_device=args.by_device) | h
                                       for r, h in zip(results, held, strict=True)]})  # fmt: skip
    else:
        render.wg_table(console, results)
        if args.by_device:
            render.wg_device_table(console, results)
        for r, h in zip(results, held, strict=True):
            _print_heldout(console, r.partition, h.get("heldout", []))
    return 0


def _rounds_behind(data: wg.WgDataset, paths: list[str]) -> list[RoundSamples]:
    """The collections of rounds that --samples names, each checked to hold some of the
    data's scenarios (before any evaluation runs)."""
    from perfport.wg import heldout

    out = []
    for path in paths:
        rounds = heldout.load_samples(path)
        if not heldout.match_rows(data, rounds):
            raise PerfportError(
                f"--samples {path}: none of its scenarios is in the data's table (same device, "
                "kernel and dataset labels and medians); give the rounds the dataset was built from"
            )
        out.append(rounds)
    return out


def _heldout(
    data: wg.WgDataset, result: wg.EvalResult, rounds: list[RoundSamples], split: str, seed: int
) -> dict[str, Any]:
    """The ``heldout`` key of one result: its choices scored on each collection."""
    if not rounds:
        return {}
    from perfport.wg import heldout

    how = heldout.Split(split)
    return {
        "heldout": [heldout.heldout_report(data, result, r, how, seed).to_json() for r in rounds]
    }


def _print_heldout(console: Console, partition: str, reports: list[dict[str, Any]]) -> None:
    for rep in reports:
        console.print(f"{partition}, held-out rounds of {rep['samples']} ({rep['matched']} scenarios, "
                      f"{rep['split']} of {rep['rounds']} rounds):")  # fmt: skip
        for s in rep["scores"]:
            lo, hi = s["heldout_ci95"]
            console.print(f"  {s['choice']:28s} held-out {s['heldout']:.1%} ({lo:.1%}-{hi:.1%})  "
                          f"same-table {s['same_table']:.1%}")  # fmt: skip
