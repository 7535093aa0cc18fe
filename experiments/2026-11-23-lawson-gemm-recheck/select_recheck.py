"""Re-measure a sweep table's single-launch cells, where one hiccup becomes the stored time.

    python3 experiments/2026-11-23-lawson-gemm-recheck/select_recheck.py measure --data TABLE.csv.gz --device opencl:0:0 \
        --out recheck.csv [--max-time 450]                  # on the GPU machine; resumes
    python experiments/2026-11-23-lawson-gemm-recheck/select_recheck.py apply --data TABLE.csv.gz --recheck recheck.csv \
        --out PATCHED.csv.gz [--json]                       # here

``perfport sweep`` timed a configuration with one launch when that launch lasted more than
3 ms (``perfport.tune.SWEEP_TIMING`` before 2026-11-23, no warm-up; it now takes at least 3),
and with up to 20 launches below that; the shipped GEMM tables were measured so. A one-off
delay in that single launch then stood as the cell's time, with no other sample to outvote
it. ``measure`` launches every cell stored at ``--threshold-ms`` (3 ms) or more (a superset of
the single-launch cells, picked by stored time alone) twice more, in problem order, on a device
of the same name as the table's (give one of the same backend too: the table does not say
which). A problem's lines are written and flushed together; a later run keeps the problems
complete in ``--out``, drops a partial one, and measures the rest. Outputs are not checked
again: the sweep verified every (build, configuration) against numpy.

``apply`` replaces each re-measured cell by the median of its three samples (the sweep's and
the two new ones), which outvotes one delay in either run, writes the patched table, and
reports how many cells moved by more than 10% and 2x, and the largest moves. It refuses a
file whose cells or sweep times do not match the table.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Config
from perfport.kernels import builtin
from perfport.select import PerfTable, load_csv
from perfport.select.table_file import save_csv

SINGLE_LAUNCH_MS = 3.0  # SWEEP_TIMING.target_s: at or above it, the old sweep launched once
NEW_SAMPLES = 2
HEADER = ["row", "config", "sweep_ms", "new_ms"]


def single_launch_cells(table: PerfTable, threshold_ms: float) -> dict[int, list[int]]:
    """Problem row -> configuration columns whose stored time came from one launch."""
    slow = np.nan_to_num(table.times, nan=0.0) >= threshold_ms
    return {int(p): np.flatnonzero(slow[p]).tolist() for p in np.flatnonzero(slow.any(axis=1))}


def _problem(table: PerfTable, row: int, kernel: str) -> dict[str, Any]:
    """The row's problem with each value of its default's type (the table stores numbers)."""
    defaults = dict(builtin(kernel).problem)
    return {
        name: type(defaults[name])(value)
        for name, value in zip(table.problem_names, table.problems[row].tolist(), strict=True)
    }


def read_recheck(path: Path) -> list[dict[str, str]]:
    """The lines of a file ``measure`` wrote (maybe gzipped; empty: none)."""
    if not path.is_file():
        raise SystemExit(f"no recheck file at {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", newline="") as f:
            reader = csv.DictReader(f)
            lines = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:  # a bad gzip file is an OSError
        raise SystemExit(f"{path} is not a recheck CSV: {exc}") from None
    if reader.fieldnames is not None and list(reader.fieldnames) != HEADER:
        raise SystemExit(f"{path} has columns {reader.fieldnames}, not {HEADER}")
    return lines


def _complete(out: Path, cells: dict[int, list[int]]) -> set[int]:
    """The problems ``out`` holds every cell of. A killed run may have left part of a problem:
    ``out`` is rewritten without it, so that it is measured again in full."""
    if not out.is_file() or out.stat().st_size == 0:
        out.write_text(",".join(HEADER) + "\n")
        return set()
    lines = read_recheck(out)
    count = Counter(line["row"] for line in lines)
    done = {int(row) for row, n in count.items() if n == len(cells.get(int(row), ()))}
    kept = [line for line in lines if int(line["row"]) in done]
    if len(kept) < len(lines):
        partial = out.with_suffix(".partial")
        with partial.open("w", newline="") as f:
            writer = csv.DictWriter(f, HEADER)
            writer.writeheader()
            writer.writerows(kept)
        partial.replace(out)
    return done


def measure(args: argparse.Namespace) -> int:
    from perfport.devices import get_device, open_session
    from perfport.measure import RunSettings, Timing, TrialEngine
    from perfport.tune.tune import resolve_problem

    table = load_csv(args.data)
    spec = builtin(table.kernel)
    cells = single_launch_cells(table, args.threshold_ms)
    done = _complete(args.out, cells)
    device = get_device(args.device, spec.language)
    if device.name != table.device:
        raise SystemExit(f"{args.data} was measured on {table.device}, not on {device.name}")
    settings = RunSettings(verify=False, timing=Timing.fixed(NEW_SAMPLES, warmup=0))
    started = time.monotonic()
    session = open_session(device)
    builds: dict[Any, Any] = {}
    measured = 0
    try:
        with args.out.open("a", newline="") as f:
            writer = csv.writer(f)
            for row, columns in cells.items():
                if row in done:
                    continue
                if time.monotonic() - started >= args.max_time:
                    break
                problem = resolve_problem(spec, _problem(table, row, table.kernel))
                engine = TrialEngine(session, spec, problem, settings, builds)
                lines = []
                for c in columns:
                    config = Config.of(dict(zip(table.param_names, table.configs[c], strict=True)))
                    m = engine.run(config, verify=False)
                    new = " ".join(f"{t:.5g}" for t in m.times_ms) if m.ok else m.outcome.value
                    lines.append([row, c, f"{table.times[row, c]:.5g}", new])
                writer.writerows(lines)  # a problem's lines together: see _complete
                f.flush()
                measured += 1
    finally:
        session.close()
    left = len(cells) - len(done) - measured
    print(json.dumps({"device": device.name, "problems_measured": measured,
                      "problems_left": left, "seconds": round(time.monotonic() - started, 1)}))  # fmt: skip
    return 0


def patched(table: PerfTable, recheck: Path) -> tuple[PerfTable, list[dict[str, Any]]]:
    """The table with each cell of ``recheck`` (what ``measure`` wrote, maybe gzipped) at the
    median of its three samples, and one record per cell: row, column, sweep and patched
    times."""
    times = table.times.copy()
    moves = []
    seen: set[tuple[int, int]] = set()
    for n, line in enumerate(read_recheck(recheck), start=2):
        where = f"{recheck}, line {n}"
        try:
            row, col, sweep_ms = int(line["row"]), int(line["config"]), float(line["sweep_ms"])
        except (TypeError, ValueError):
            raise SystemExit(f"{where}: row, config and sweep_ms must be numbers") from None
        if not (0 <= row < table.n_problems and 0 <= col < table.n_configs) or (row, col) in seen:
            raise SystemExit(f"{where}: cell ({row}, {col}) is outside the table or repeated; "
                             "is this the recheck file of this table?")  # fmt: skip
        seen.add((row, col))
        try:
            new = [float(t) for t in line["new_ms"].split()]
        except ValueError:  # an outcome in place of times: it failed now, the sweep's stands
            continue
        if len(new) != NEW_SAMPLES:
            raise SystemExit(f"{where}: {len(new)} new samples, expected {NEW_SAMPLES}")
        median = float(np.median([sweep_ms, *new]))
        # The table holds the sweep's time, or this median where the file was applied before.
        if _sig(table.times[row, col]) not in (_sig(sweep_ms), _sig(median)):
            raise SystemExit(f"{where}: the table has {table.times[row, col]:.5g} ms at this "
                             f"cell, not {sweep_ms:.5g}: the file belongs to another table")  # fmt: skip
        times[row, col] = median
        moves.append({"row": row, "col": col, "sweep_ms": sweep_ms, "patched_ms": median})
    out = PerfTable(table.problem_names, table.problems, table.param_names, table.configs,
                    times, table.device, table.kernel)  # fmt: skip
    return out, moves


def _sig(ms: float) -> str:
    return f"{ms:.5g}"  # the precision of a table's times


def apply(args: argparse.Namespace) -> int:
    table = load_csv(args.data)
    out, moves = patched(table, args.recheck)
    save_csv(out, args.out)
    ratio = np.array([m["sweep_ms"] / m["patched_ms"] for m in moves])
    largest = sorted(moves, key=lambda m: -m["sweep_ms"] / m["patched_ms"])[:10]
    report = {
        "cells": len(moves),
        "single_launch_cells": sum(len(c) for c in single_launch_cells(table, args.threshold_ms).values()),
        "slower_in_sweep_10pct": int((ratio > 1.1).sum()),
        "faster_in_sweep_10pct": int((ratio < 1 / 1.1).sum()),
        "slower_in_sweep_2x": int((ratio > 2).sum()),
        "largest": [{**{n: v for n, v in zip(table.problem_names, table.problems[m["row"]].tolist(), strict=True)},
                     **dict(zip(table.param_names, table.configs[m["col"]], strict=True)),
                     "sweep_ms": m["sweep_ms"], "patched_ms": m["patched_ms"]} for m in largest],
    }  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"{report['cells']} of {report['single_launch_cells']} single-launch cells "
              f"re-measured; the sweep's time was > 10% slower at {report['slower_in_sweep_10pct']}, "
              f"> 10% faster at {report['faster_in_sweep_10pct']}, > 2x slower at "
              f"{report['slower_in_sweep_2x']}")  # fmt: skip
        for m in report["largest"]:
            print("  ", m)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("measure", "apply"):
        p = sub.add_parser(name)
        p.add_argument("--data", type=Path, required=True, help="a sweep table (.csv.gz)")
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--threshold-ms", type=float, default=SINGLE_LAUNCH_MS)
    sub.choices["measure"].add_argument("--device", required=True)
    sub.choices["measure"].add_argument("--max-time", type=float, default=450.0)
    sub.choices["apply"].add_argument("--recheck", type=Path, required=True)
    sub.choices["apply"].add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return measure(args) if args.command == "measure" else apply(args)


if __name__ == "__main__":
    sys.exit(main())
