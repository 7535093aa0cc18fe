"""``perfport model evaluate``: the paper's evaluation (calibrate on measurement kernels,
predict application kernels, report the errors), and a calibration's predictions of a user's
own loopy kernel (``--calibration CAL --kernel FILE.py``). Handlers import the model capability
when they run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport._core import PerfportError
from perfport.cli import model_fit as fit
from perfport.cli import render
from perfport.cli.arguments import check_folder, check_output, database

if TYPE_CHECKING:
    from rich.console import Console

# ``model evaluate`` with neither --data nor --db: the paper's eight variants on both GPUs and
# on PoCL, with the model of docs/model.md's best GPU figures. With --data or --db the default
# model is the matmul one, which the basic collection informs (a user's first evaluation).
SHIPPED_DATA = ("h100-paper.csv", "h200-paper.csv", "pocl-paper.csv")
SHIPPED_DATA_MODEL = "paper-linear-tile.json"
SHIPPED_MODEL = "matmul-linear.json"


def add_evaluate(model_sub: Any) -> None:
    p = model_sub.add_parser(
        "evaluate",
        help="calibrate on measurement kernels, predict application kernels, report errors",
        description="Without --data or --db: the measurements shipped with perfport, the "
        "paper's eight variants on an H100, an H200 and PoCL (no device needed). With "
        "--calibration CAL --kernel FILE.py: how well CAL predicts your own loopy kernel's "
        "measurements in --db (default perfport.db), those 'perfport tune FILE.py' (a loopy "
        "space file) or 'perfport model measure FILE.py' stored.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--data", help="measurements: JSON or CSV (perfport export's or slim)")
    source.add_argument("--db", type=database, help="measurements: a results database")
    p.add_argument("--device", nargs="+", action="extend", default=[], metavar="NAME",
                   help="only these devices (name substring or fingerprint)")  # fmt: skip
    p.add_argument("--model", help="model JSON (default: paper-linear-tile for the shipped "
                   "measurements, the matmul model for --data and --db)")  # fmt: skip
    p.add_argument("--nonnegative", action="store_true",
                   help="bound every cost parameter below by 0 (refit by trust-region "
                   "reflective where Levenberg-Marquardt gives a negative cost)")  # fmt: skip
    p.add_argument("--write-data", metavar="CSV", help="also write the measurements used")
    p.add_argument("--figures", metavar="DIR",
                   help="also draw the paper's Figures 7-9 and a per-term breakdown as SVG "
                   "files in DIR")  # fmt: skip
    p.add_argument("--calibration", metavar="CAL",
                   help="with --kernel: a calibration file ('model calibrate --out')")  # fmt: skip
    p.add_argument("--kernel", metavar="FILE.py",
                   help="with --calibration: your loopy space or kernel file")  # fmt: skip
    fit.add_subgroup(p, "the sub-group size the devices in --db report (with --kernel: the "
                     "calibration's), else 32")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_evaluate)


def _chosen_devices(runs: list[Any], wanted: list[str]) -> list[Any]:
    if not wanted:
        return runs
    chosen = [r for r in runs if any(w.lower() in r.device.lower() or w == r.device_fingerprint
                                     for w in wanted)]  # fmt: skip
    if not chosen:
        known = sorted({f"{r.device} ({r.device_fingerprint})" for r in runs})
        raise PerfportError(f"no measurements of device {' '.join(wanted)}; the data has "
                            f"{'; '.join(known) or 'none'}")  # fmt: skip
    return chosen


def _write_figures(evaluation: dict[str, Any], folder: str) -> list[str]:
    from perfport.report.model_figures import model_figures

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, svg in model_figures(evaluation).items():
        (out / name).write_text(svg + "\n")
        paths.append(str(out / name))
    return paths


def run_evaluate(args: argparse.Namespace, console: Console) -> int:
    from perfport.model import Model
    from perfport.model.dataset import from_store, read_data, write_data
    from perfport.model.evaluate import evaluate

    if args.kernel or args.calibration:
        return _evaluate_kernel(args, console)
    check_output(args.write_data, "--write-data")
    check_folder(args.figures, "--figures")
    own = args.db or args.data
    model = Model.load(args.model or fit.shipped(SHIPPED_MODEL if own else SHIPPED_DATA_MODEL))
    if args.db:
        runs = from_store(args.db)
    elif args.data:
        runs = read_data(args.data)
    else:
        runs = [run for name in SHIPPED_DATA for run in read_data(fit.shipped(name))]
    runs = _chosen_devices(runs, args.device)
    if args.write_data:
        write_data(runs, args.write_data)
    size = _stored_width(args.db, {r.device_fingerprint for r in runs}) if args.db else None
    features = fit._features(args.subgroup_size or size)
    evaluation = evaluate(model, runs, features, nonnegative=args.nonnegative)
    fit._say_skipped(evaluation.skipped)
    figures = _write_figures(evaluation.to_json(), args.figures) if args.figures else None
    if args.json:
        extra = {} if figures is None else {"figures": figures}
        render.print_json({"model": model.to_json(), **evaluation.to_json(), **extra,
                           "subgroup_size": features.subgroup_size})  # fmt: skip
        _warn_negative_on_stderr(evaluation)
        return 0
    for path in figures or ():
        console.print(f"wrote {path}", highlight=False, markup=False)
    _print_evaluation(console, evaluation)
    return 0


def _stored_width(db: str | Path, devices: set[str], quiet: bool = False) -> int | None:
    """The sub-group size the store's ``devices`` (fingerprints or names) report; None where
    none does (or ``db`` is not there); refused where they differ, unless ``quiet``."""
    import json

    from perfport.store import ReadOnlyStore

    if not Path(db).is_file():
        return None
    with ReadOnlyStore(db) as store:
        rows = store.query("SELECT fingerprint, name, info FROM devices")
    widths = {f"{r['name']}": json.loads(r["info"]).get("subgroup_size") for r in rows
              if r["fingerprint"] in devices or r["name"] in devices}  # fmt: skip
    found = {w for w in widths.values() if w}
    if len(found) > 1 and not quiet:
        shown = ", ".join(f"{n} {w or 'none'}" for n, w in sorted(widths.items()))
        raise PerfportError(f"the devices in {db} report different sub-group sizes ({shown}); "
                            "evaluate one at a time with --device, or give --subgroup-size")  # fmt: skip
    return min(found) if found else None


# What --kernel evaluates is fixed by the calibration and the file: these would change nothing.
_NOT_WITH_KERNEL = ("data", "model", "nonnegative", "write_data", "figures")


def _evaluate_kernel(args: argparse.Namespace, console: Console) -> int:
    """``--calibration CAL --kernel FILE.py``: CAL's predictions of the file's measurements."""
    from perfport.model import StatsCache
    from perfport.model.coverage import uncovered
    from perfport.model.evaluate_file import evaluate_kernel, load_user_kernel

    if not (args.kernel and args.calibration):
        given, needed = ("--kernel", "--calibration CAL") if args.kernel else (
            "--calibration", "--kernel FILE.py")  # fmt: skip
        raise PerfportError(f"{given} evaluates your own loopy kernel with a calibration: add "
                            f"{needed}")  # fmt: skip
    extra = [n for n in _NOT_WITH_KERNEL if getattr(args, n)] + ["device"] * bool(args.device)
    if extra:
        flag = "--" + extra[0].replace("_", "-")
        raise PerfportError(f"{flag} does not apply to --kernel (the calibration fixes the model "
                            f"and the device; the measurements are in --db): drop {flag}")  # fmt: skip
    calibration = fit.load_calibration(args.calibration)
    kernel = load_user_kernel(args.kernel)
    db = args.db or "perfport.db"
    # The width the calibration was counted with, as predict takes it: one calibration, one
    # kernel and one size give one prediction. A file that records none: its device's.
    size = (args.subgroup_size or calibration.subgroup_size
            or _stored_width(db, {calibration.device}, quiet=True))  # fmt: skip
    cache = StatsCache(fit._cache_folder(), subgroup_size=fit.subgroup_size(size))
    found: dict[str, None] = {}  # each kind of warning once, however many points show it
    model = calibration.model
    features = model.feature_set()

    def check(stats: Any) -> None:
        found.update(dict.fromkeys(uncovered(features, model.features, stats)))

    evaluation = evaluate_kernel(kernel, calibration, db, cache, check)
    fit._say_skipped(evaluation.skipped)
    for line in found:
        print(f"WARNING: {line}", file=sys.stderr)
    if args.json:
        render.print_json({"model": model.to_json(), "kernel": kernel.stored, "db": str(db),
                           **evaluation.to_json(), "warnings": list(found),
                           "subgroup_size": cache.subgroup_size})  # fmt: skip
        _warn_negative_on_stderr(evaluation)
    else:
        _print_evaluation(console, evaluation)
    return 0


def _warn_negative_on_stderr(evaluation: Any) -> None:
    """With --json, each negative-cost WARNING line the text report prints, on stderr."""
    for c in evaluation.calibrations:
        if line := fit.negative_warning(c):
            print(line, file=sys.stderr)


def _print_evaluation(console: Console, evaluation: Any) -> None:
    for r in evaluation.results:
        console.print(f"{r.variant} on {r.device}: geomean relative error "
                      f"{r.geomean_rel_error:.1%} over {len(r.points)} sizes", highlight=False,
                      markup=False)  # fmt: skip
        for p in r.points:
            console.print(f"  {p.sizes}: measured {p.measured_ms:.4g} ms, predicted "
                          f"{p.predicted_ms:.4g} ms ({p.rel_error:.1%})", highlight=False,
                          markup=False)  # fmt: skip
    wrong = evaluation.misranked
    # A space file's dozens of configurations can misrank hundreds of pairs: --json has all.
    more = f"; {len(wrong) - 3} more (--json lists them)" if len(wrong) > 3 else ""
    ranking = "correct" if not wrong else "wrong: " + "; ".join(wrong[:3]) + more
    if not evaluation.ranked_pairs:  # one variant, or none 10% apart: nothing to rank
        ranking = "not tested"
    for u in evaluation.unpredictable:
        console.print(f"{u.variant} on {u.device}: not predicted ({len(u.sizes)} sizes): "
                      f"{u.reason}", style="bold red", highlight=False, markup=False)  # fmt: skip
    for c in evaluation.calibrations:
        fit._warn_negative(console, c)
    console.print(f"overall geomean relative error {evaluation.geomean_rel_error:.1%}; ranking "
                  f"{ranking} ({evaluation.ranked_pairs} pairs > 10% apart)", highlight=False,
                  markup=False)  # fmt: skip
