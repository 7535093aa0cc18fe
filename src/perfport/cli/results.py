"""``perfport results``, ``import`` and ``export``: what the results database holds, in and out."""

from __future__ import annotations

import argparse
import gzip
import sys
from typing import TYPE_CHECKING, TextIO

import perfport
from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    check_output,
    database,
    problem_values,
)

if TYPE_CHECKING:
    from rich.console import Console


DB_HELP = "results database (default: perfport.db)"


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("results", help="best configuration per device, kernel and problem")
    p.add_argument("--db", type=database, default="perfport.db", help=DB_HELP)
    p.add_argument("--kernel", help="only this kernel (name or source-hash prefix)")
    p.add_argument("--device", help="only this device (fingerprint or name)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_results)

    p = sub.add_parser("import", help="import a Kernel Tuner cache (.json/.json.gz) or T4 file")
    p.add_argument("file", metavar="FILE", help="the file to import (.json or .json.gz)")
    p.add_argument("--db", type=database, default="perfport.db", help=DB_HELP)
    p.add_argument("--device-name", help="store it as this device (default: the file's name "
                   "for it; needed where the file has none)")  # fmt: skip
    p.add_argument("--kernel-name", help="store it as this kernel (default: the file's name "
                   "for it; needed where the file has none)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_import)

    p = sub.add_parser(
        "export", help="write stored results as CSV, JSON, a Kernel Tuner cache or T4"
    )
    p.add_argument("--db", type=database, default="perfport.db", help=DB_HELP)
    p.add_argument("--kernel", help="only this kernel (name or source-hash prefix)")
    p.add_argument("--device", help="only this device (fingerprint or name)")
    p.add_argument(
        "--format",
        choices=("csv", "json", "kt-cache", "t4"),
        help="default csv; kt-cache and t4 hold one device/kernel/problem: narrow with "
        "--kernel/--device",
    )
    p.add_argument(
        "--problem", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
        help="kt-cache and t4: only the results at these problem values (a kernel tuned at "
        "several sizes), e.g. --problem n=4096",
    )  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="same as --format json (refused with another --format)")  # fmt: skip
    p.add_argument("--output", "-o", help="file to write (default: standard output)")
    p.set_defaults(run=run_export)


def run_results(args: argparse.Namespace, console: Console) -> int:
    found = perfport.results(args.db, kernel=args.kernel, device=args.device)
    given = [f"--{k} {v!r}" for k, v in (("kernel", args.kernel), ("device", args.device)) if v]
    if not found and given:  # one line, as export and replay say it; with --json too (exit 2)
        raise PerfportError(
            f"no results in {args.db} match {' '.join(given)}; "
            f"'perfport results --db {args.db}' lists what it holds"
        )
    if args.json:
        render.print_json({"results": [r.to_json() for r in found]})
    elif not found:
        print(f"no results in {args.db} yet; 'perfport tune' stores some", file=sys.stderr)
    else:
        render.results_table(console, found)
    unverified = sum(r.unverified for r in found)
    if unverified:
        print(
            f"warning: {unverified} correct-looking results are not verified (tuned with "
            "--no-verify, with nothing to compare their outputs with, or swept: a sweep "
            "verifies each configuration at its first problem only); 'perfport export' "
            "shows which",
            file=sys.stderr,
        )
    return 0


def run_import(args: argparse.Namespace, console: Console) -> int:
    from perfport.store import Store
    from perfport.store.formats.importing import parse, store_imported

    # Read first: a file that is refused leaves no database behind, not even an empty one.
    imported = parse(
        args.file,
        args.device_name,
        args.kernel_name,
        notice=lambda text: print(f"note: {text}", file=sys.stderr, flush=True),
    )
    with Store(args.db) as store:
        added = store_imported(store, imported, args.file)
    if args.json:
        render.print_json({**imported.to_json(), "added": added})
    elif added or not imported.measurements:
        total = len(imported.measurements)
        known = f"; {total - added} were in from an earlier import" if added < total else ""
        console.print(
            f"imported {total} configurations ({imported.failed} failed) of {imported.kernel} "
            f"on {imported.device} from {args.file} into {args.db}{known}"
        )
    else:
        console.print(f"{args.file} is already in {args.db} as {imported.kernel} on "
                      f"{imported.device}: nothing added")  # fmt: skip
    return 0


def run_export(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import stored_device
    from perfport.store import Store, export_keys, export_rows, write_csv, write_json
    from perfport.store.formats.kt_cache import kt_cache_text, to_kt_cache
    from perfport.store.formats.t4 import t4_text, to_t4
    from perfport.store.queries import no_match

    # --json is --format json, for every format alike: with another --format (csv too, which
    # it used to override silently) the two ask for different files.
    if args.json and args.format not in (None, "json"):
        raise PerfportError(
            f"--json writes perfport's JSON rows, --format {args.format} another file: give one"
        )
    fmt = "json" if args.json else args.format or "csv"
    args.device = stored_device(args.device)
    check_output(args.output, "--output")
    if args.problem and fmt not in ("kt-cache", "t4"):  # csv and json were silently unfiltered
        raise PerfportError(
            f"--problem narrows a kt-cache or t4 export; {fmt} holds every problem (its problem "
            "column says which): drop --problem, or give --format kt-cache or t4"
        )
    with Store(args.db, create=False) as store:
        if fmt in ("kt-cache", "t4"):
            convert = to_kt_cache if fmt == "kt-cache" else to_t4
            problem = problem_values(args.problem)
            document = convert(store, kernel=args.kernel, device=args.device, problem=problem)
            count = len(document.get("cache") or document.get("results") or [])
            # Before the output is opened: a document JSON cannot hold leaves no file behind.
            text = kt_cache_text(document) if fmt == "kt-cache" else t4_text(document)

            def write(out: TextIO) -> int:
                out.write(text)
                return count
        else:
            unmatched = no_match(store, args.kernel, args.device)
            if unmatched:  # as results, replay and the other formats say (a bare header before)
                raise PerfportError(unmatched)
            rows = export_rows(store, kernel=args.kernel, device=args.device)
            keys = export_keys(store, kernel=args.kernel, device=args.device)

            def write(out: TextIO) -> int:  # streams: constant memory at a million results
                return write_json(rows, out) if fmt == "json" else write_csv(rows, out, *keys)

        try:
            if args.output:
                with _opened(args.output) as out:
                    n = write(out)
                print(f"wrote {n} results to {args.output}", file=sys.stderr)
            else:
                write(sys.stdout)
        finally:
            if fmt not in ("kt-cache", "t4"):
                rows.close()  # while the store is open: a reader that stopped early (| head)
    return 0


def _opened(path: str) -> TextIO:
    """An output file, gzipped when its name says so (as import reads it)."""
    if path.endswith(".gz"):
        return gzip.open(path, "wt", newline="")
    return open(path, "w", newline="")
