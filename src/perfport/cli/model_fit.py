"""``perfport model calibrate | predict | measure | evaluate``: fitting a model to a device's
measurement kernels, predicting a kernel with the result, measuring application kernels, and
the paper's evaluation. Handlers import the model capability when they run."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import (
    add_problem,
    check_folder,
    check_output,
    database,
    problem_values,
)

if TYPE_CHECKING:
    from rich.console import Console

    from perfport.model import Calibration

# ``model evaluate`` with neither --data nor --db: the paper's eight variants on both GPUs and
# on PoCL, with the model of docs/model.md's best GPU figures. With --data or --db the default
# model is the matmul one, which the basic collection informs (a user's first evaluation).
SHIPPED_DATA = ("h100-paper.csv", "h200-paper.csv", "pocl-paper.csv")
SHIPPED_DATA_MODEL = "paper-linear-tile.json"
SHIPPED_MODEL = "matmul-linear.json"


def add_parsers(model_sub: Any) -> None:
    p = model_sub.add_parser(
        "calibrate",
        help="fit a model's parameters to a device's measurement kernels in the store",
        description="MODEL_FILE is a model JSON (perfport.model.Model.save). Every "
        "measurement kernel of the device in --db (from 'perfport model collect') is counted "
        "with loopy and the model calibrated on them; the calibration is written to --out "
        "and kept in the store under the device's fingerprint.",
    )
    p.add_argument(
        "model_file", metavar="MODEL_FILE", help="a model saved as JSON (perfport.model.save)"
    )
    p.add_argument("--device", help="device id (default: the default device)")
    p.add_argument("--db", type=database, default="perfport.db", help="the results database")
    p.add_argument("--out", required=True, help="calibration JSON to write")
    p.add_argument("--nonnegative", action="store_true",
                   help="bound every cost parameter below by 0 (refit by trust-region "
                   "reflective where Levenberg-Marquardt gives a negative cost)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_calibrate)

    p = model_sub.add_parser(
        "predict",
        help="a kernel's time from a calibration, and each term's share of it",
        description="KERNEL is a built-in application kernel (matmul-prefetch, "
        "matmul-noprefetch, dg-plain, dg-prefetch-u, dg-prefetch-dm, dg-prefetch-dm-tr, "
        "fd-16x16, fd-18x18) or a .py loopy kernel file, as for 'model stats'.",
    )
    p.add_argument(
        "calibration", metavar="CALIBRATION", help="a calibration file ('model calibrate --out')"
    )
    p.add_argument(
        "kernel", metavar="KERNEL", help="a built-in application kernel or a .py loopy kernel file"
    )
    add_problem(p)
    add_config(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_predict)

    p = model_sub.add_parser(
        "measure",
        help="measure an application kernel at several sizes into the store (as app-NAME)",
    )
    p.add_argument(
        "kernel", metavar="KERNEL", help="a built-in application kernel or a .py loopy kernel file"
    )
    p.add_argument("--sizes", nargs="+", action="extend", required=True, metavar="NAME=V1,V2",
                   help="sizes to measure, e.g. n=256,512,1024 (Cartesian product)")  # fmt: skip
    p.add_argument("--device", help="device id (default: the default device)")
    p.add_argument("--db", type=database, default="perfport.db", help="the results database")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_measure)
    _add_evaluate(model_sub)


def _add_evaluate(model_sub: Any) -> None:
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
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_evaluate)


def add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="one configuration of a loopy space file (a value for each parameter)")  # fmt: skip


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfport" / "model"


def _sizes(assignments: list[str]) -> dict[str, int]:
    sizes = {}
    for name, value in problem_values(assignments).items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise PerfportError(
                f"--problem {name}={value}: loopy sizes are integers; give {name}=INTEGER"
            )
        sizes[name] = value
    return sizes


def with_defaults(args: argparse.Namespace, stats: Any, sizes: dict[str, int]) -> dict[str, int]:
    """``sizes`` (--problem) over the defaults of a space file's ``sizes``, as ``perfport tune``
    takes them; only those the kernel takes (a size of the shapes alone may not be)."""
    from perfport.kernels.loader import is_loopy_space_file

    if not args.config or not is_loopy_space_file(args.kernel):
        return sizes
    from perfport.model.loopy_file import load_space

    defaults = load_space(args.kernel).sizes
    return {**{k: v for k, v in defaults.items() if k in stats.params}, **sizes}


def shipped(name: str) -> Path:
    from importlib import resources

    return Path(str(resources.files("perfport").joinpath("datasets", "model", name)))


def _features() -> Any:
    from perfport.model import StatsCache
    from perfport.model.dataset import KernelFeatures

    return KernelFeatures(StatsCache(_cache_folder()))


def run_calibrate(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import get_device
    from perfport.model import Model, calibrate
    from perfport.model.dataset import from_store
    from perfport.store import Store
    from perfport.store.calibrations import record_calibration

    check_output(args.out, "--out")
    if Path(args.out).resolve() == Path(args.model_file).resolve():
        raise PerfportError(f"--out {args.out} is the model file; write the calibration to "
                            "another file (the model file stays the model)")  # fmt: skip
    model = Model.load(args.model_file)
    model.check_features()
    device = get_device(args.device)
    collect = f"run 'perfport model collect --device {device.id} --db {args.db}' first"
    runs = []
    if Path(args.db).is_file():
        runs = [r for r in from_store(args.db, device.fingerprint) if r.is_collection]
    if not runs:
        raise PerfportError(f"no measurement kernels of {device.name} in {args.db}; {collect}")
    features = _features()
    runs, skipped = features.usable(runs)
    _say_skipped(skipped)
    if not runs:
        raise PerfportError(f"no countable measurement kernels of {device.name} in {args.db}; "
                            f"{skipped[0].line()}")  # fmt: skip
    data = features.measurements(model, runs)
    calibration = calibrate(model, data, device=device.name, nonnegative=args.nonnegative)
    calibration.save(args.out)
    with Store(args.db) as store:
        record_calibration(store, device, model.output, model.expression, calibration.to_json())
    report = {
        "device": device.name,
        "device_id": device.id,
        "device_fingerprint": device.fingerprint,
        "parameters": dict(calibration.parameters),
        "residual": calibration.residual,
        "n_measurements": calibration.n_measurements,
        "nonnegative": calibration.nonnegative,
        "negative": list(calibration.negative),
        "bounded": calibration.bounded,
        "at_bound": list(calibration.at_bound),
        "unbounded_negative": list(calibration.unbounded_negative),
        "skipped": [k.to_json() for k in skipped],
        "out": str(args.out),
    }
    if args.json:
        render.print_json(report)
        return 0
    console.print(f"{device.name}: {calibration.n_measurements} measurements, residual "
                  f"{calibration.residual:.3g}", highlight=False, markup=False)  # fmt: skip
    for name, value in calibration.parameters.items():
        console.print(f"  {name} = {value:.4g}", highlight=False, markup=False)
    _warn_negative(console, calibration)
    console.print(f"wrote {args.out}", highlight=False, markup=False)
    return 0


def _say_skipped(skipped: Any) -> None:
    """One line each on stderr (so --json output stays one document): kernels loopy cannot
    count, left out of the calibration or evaluation."""
    for k in skipped:
        print(f"warning: {k.line()}", file=sys.stderr)


def _warn_negative(console: Console, calibration: Any) -> None:
    """Say a negative cost loudly: predictions that lean on it are not to be trusted; and
    which costs a bounded fit left at 0 (the measurements could not fix them above it)."""
    if calibration.bounded:
        console.print(f"{calibration.device}: bounded fit (Levenberg-Marquardt gave "
                      f"{', '.join(calibration.unbounded_negative)} < 0); at 0: "
                      f"{', '.join(calibration.at_bound) or 'none'}", highlight=False,
                      markup=False)  # fmt: skip
    if calibration.negative:
        costs = ", ".join(f"{p} = {calibration.parameters[p]:.3g}" for p in calibration.negative)
        console.print(f"WARNING {calibration.device}: nonnegative: false ({costs} < 0): the "
                      "measurements do not separate these costs; predictions that use them "
                      "are unreliable", style="bold red", highlight=False,
                      markup=False)  # fmt: skip


def run_predict(args: argparse.Namespace, console: Console) -> int:
    from perfport.model import Calibration, StatsCache, input_features, predict
    from perfport.model.coverage import uncovered
    from perfport.model.loopy_file import load_kernel

    calibration = Calibration.load(args.calibration)
    sizes = _sizes(args.problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loopy's notes are kept in the stats' approximations
        stats = StatsCache(_cache_folder()).stats(load_kernel(args.kernel, args.config, sizes))
    sizes = with_defaults(args, stats, sizes)
    evaluated = checked(stats, sizes)
    inputs = input_features(calibration.model, evaluated, device=calibration.device)
    prediction = predict(calibration, inputs)
    found = uncovered(calibration.model.feature_set(), calibration.model.features, evaluated)
    if not prediction.value > 0:
        # A time cannot be negative: some fitted costs are, and they dominate this kernel.
        costs = ", ".join(calibration.negative) or "none is negative"
        found.append(f"the predicted time is not positive ({prediction.value * 1e3:.4g} ms); "
                     f"the calibration's negative costs: {costs}; calibrate again with "
                     "--nonnegative, or with measurement kernels that exercise this kernel's "
                     "features")  # fmt: skip
    for line in found:  # on stderr too: --json output stays one document
        print(f"WARNING: {line}", file=sys.stderr)
    report = {
        "kernel": args.kernel,
        "device": calibration.device,
        "sizes": sizes,
        "predicted_ms": prediction.value * 1e3,
        "terms": dict(prediction.terms),
        "features": inputs,
        "warnings": found,
    }
    if args.json:
        render.print_json(report)
        return 0
    shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
    console.print(f"{args.kernel} ({shown}) on {calibration.device}: "
                  f"{report['predicted_ms']:.4g} ms", highlight=False, markup=False)  # fmt: skip
    for term, share in prediction.terms.items():
        console.print(f"  {share:7.1%}  {term}", highlight=False, markup=False)
    return 0


def checked(stats: Any, sizes: Mapping[str, int]) -> Any:
    """``stats`` evaluated at ``sizes``, refused in one line where the kernel has no such
    size, lacks one, or its assumptions exclude them (evaluate refuses the last two)."""
    unknown = sorted(set(sizes) - set(stats.params))
    if unknown:
        raise PerfportError(f"kernel {stats.kernel} has no size {unknown[0]}; its sizes are "
                            f"{', '.join(stats.params) or 'none'}")  # fmt: skip
    return stats.evaluate(sizes)


def _size_grid(texts: list[str]) -> list[Any]:
    from perfport._core.records import Problem

    axes: dict[str, list[int]] = {}
    for text in texts:
        name, eq, values = text.partition("=")
        try:
            parsed = [int(v) for v in values.split(",")]
        except ValueError:
            parsed = []
        if not eq or not name.isidentifier() or not parsed or min(parsed) < 1:
            raise PerfportError(f"--sizes {text}: give NAME=V1,V2 with positive integers")
        if name in axes:  # the last would silently win
            raise PerfportError(f"--sizes: {name} is given twice; give its values once, "
                                f"{name}=V1,V2")  # fmt: skip
        axes[name] = list(dict.fromkeys(parsed))  # n=16,16 is one size, measured once
    return [Problem.of(dict(zip(axes, combo, strict=True))) for combo in
            itertools.product(*axes.values())]  # fmt: skip


def run_measure(args: argparse.Namespace, console: Console) -> int:
    from perfport.devices import get_device
    from perfport.kernels.loader import is_loopy_space_file
    from perfport.model import StatsCache, load_program
    from perfport.model.measure import CollectStatus, measure_application

    grid = _size_grid(args.sizes)
    if is_loopy_space_file(args.kernel):
        raise PerfportError(f"{args.kernel} is a loopy space file, one kernel per configuration: "
                            f"'perfport tune {args.kernel} --problem ...' measures its "
                            "configurations; model measure takes a loopy kernel file "
                            "(kernel = ...)")  # fmt: skip
    program = load_program(args.kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loopy's notes are kept in the stats' approximations
        stats = StatsCache(_cache_folder()).stats(program)
    for problem in grid:  # a size the kernel cannot take would be measured and stored as data
        checked(stats, dict(problem))
    name = Path(args.kernel).stem if args.kernel.endswith(".py") else args.kernel
    device = get_device(args.device)

    def show(r: Any) -> None:
        if not args.json:
            at = f"{r.time_ms:.4g} ms" if r.time_ms is not None else r.message
            console.print(f"{r.status.value:8} app-{name} {r.args}: {at}", highlight=False,
                          markup=False)  # fmt: skip

    results = measure_application(program, name, grid, device, args.db, on_result=show)
    counts = {s.value: sum(r.status is s for r in results) for s in CollectStatus}
    if args.json:
        render.print_json({"device": device.id, "device_fingerprint": device.fingerprint,
                           "kernel": f"app-{name}", "db": str(args.db), "counts": counts,
                           "results": [r.to_json() for r in results]})  # fmt: skip
    else:
        console.print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if counts[CollectStatus.FAILED.value] == len(results):
        print(f"perfport: no size of app-{name} could be measured; the messages above say why",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


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
    model = Model.load(args.model or shipped(SHIPPED_MODEL if own else SHIPPED_DATA_MODEL))
    if args.db:
        runs = from_store(args.db)
    elif args.data:
        runs = read_data(args.data)
    else:
        runs = [run for name in SHIPPED_DATA for run in read_data(shipped(name))]
    runs = _chosen_devices(runs, args.device)
    if args.write_data:
        write_data(runs, args.write_data)
    evaluation = evaluate(model, runs, _features(), nonnegative=args.nonnegative)
    _say_skipped(evaluation.skipped)
    figures = _write_figures(evaluation.to_json(), args.figures) if args.figures else None
    if args.json:
        extra = {} if figures is None else {"figures": figures}
        render.print_json({"model": model.to_json(), **evaluation.to_json(), **extra})
        return 0
    for path in figures or ():
        console.print(f"wrote {path}", highlight=False, markup=False)
    _print_evaluation(console, evaluation)
    return 0


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
    calibration = load_calibration(args.calibration)
    kernel = load_user_kernel(args.kernel)
    db = args.db or "perfport.db"
    found: dict[str, None] = {}  # each kind of warning once, however many points show it
    model = calibration.model
    features = model.feature_set()

    def check(stats: Any) -> None:
        found.update(dict.fromkeys(uncovered(features, model.features, stats)))

    evaluation = evaluate_kernel(kernel, calibration, db, StatsCache(_cache_folder()), check)
    _say_skipped(evaluation.skipped)
    for line in found:
        print(f"WARNING: {line}", file=sys.stderr)
    if args.json:
        render.print_json({"model": model.to_json(), "kernel": kernel.stored, "db": str(db),
                           **evaluation.to_json(), "warnings": list(found)})  # fmt: skip
    else:
        _print_evaluation(console, evaluation)
    return 0


def load_calibration(path: str, how: str = "") -> Calibration:
    """The calibration file given as --calibration, refused in one line naming the fix (``how``
    to get one; default: the command that writes it)."""
    from perfport.model import Calibration, ModelError

    how = how or "give the file 'perfport model calibrate ... --out' wrote"
    try:
        return Calibration.load(path)
    except ModelError as exc:
        raise PerfportError(f"--calibration {path}: {exc}") from None
    except OSError as exc:
        raise PerfportError(f"--calibration {path}: cannot be read ({exc.strerror}); give the "
                            f"file 'perfport model calibrate --out' wrote") from None  # fmt: skip
    except UnicodeDecodeError:
        raise PerfportError(f"--calibration {path}: not a calibration file; {how}") from None


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
        _warn_negative(console, c)
    console.print(f"overall geomean relative error {evaluation.geomean_rel_error:.1%}; ranking "
                  f"{ranking} ({evaluation.ranked_pairs} pairs > 10% apart)", highlight=False,
                  markup=False)  # fmt: skip
