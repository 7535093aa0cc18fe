"""``perfport model calibrate | predict | measure | evaluate``: fitting a model to a device's
measurement kernels, predicting a kernel with the result, measuring application kernels, and
the paper's evaluation (model_evaluate.py). Handlers import the model capability when they run."""

from __future__ import annotations

import argparse
import dataclasses
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
    check_output,
    database,
    integer_up_to,
    problem_values,
)

if TYPE_CHECKING:
    from rich.console import Console

    from perfport.model import Calibration


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
    add_subgroup(p, "the device's reported size, else 32")
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
    add_subgroup(p, "the width the calibration was counted with, else 32")
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


def add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="one configuration of a loopy space file (a value for each parameter)")  # fmt: skip


# As a calibration file's subgroup_size (model.calibrate.MAX_SUBGROUP): a wider width would
# be written to a file that no command could read back.
_WIDTH = integer_up_to(1024, "no device's sub-groups are wider than its work-groups", low=1)


def add_subgroup(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--subgroup-size", type=_WIDTH, metavar="N",
                   help=f"work-items per sub-group loopy counts with (default: {default})")  # fmt: skip


def subgroup_size(given: int | None, device: Any = None) -> int:
    """--subgroup-size, else the device's reported width (a warp, a wavefront), else the
    paper's 32 (PoCL's CPU device reports none)."""
    from perfport.model import SUBGROUP_SIZE

    return given or getattr(device, "subgroup_size", None) or SUBGROUP_SIZE


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfport" / "model"


def _sizes(assignments: list[str]) -> dict[str, int]:
    sizes = {}
    for name, value in problem_values(assignments).items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise PerfportError(
                f"--problem {name}={value}: loopy sizes are integers; give {name}=INTEGER"
            )
        if value < 1:  # without lp.assume, every count would be 0 (as measure --sizes refuses)
            raise PerfportError(f"--problem {name}={value}: sizes are 1 or more; give "
                                f"{name}=1 or more")  # fmt: skip
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


def _features(size: int | None = None) -> Any:
    from perfport.model import StatsCache
    from perfport.model.dataset import KernelFeatures

    return KernelFeatures(StatsCache(_cache_folder(), subgroup_size=subgroup_size(size)))


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
    size = subgroup_size(args.subgroup_size, device)
    features = _features(size)
    runs, skipped = features.usable(runs)
    _say_skipped(skipped)
    if not runs:
        raise PerfportError(f"no countable measurement kernels of {device.name} in {args.db}; "
                            f"{skipped[0].line()}")  # fmt: skip
    data = features.measurements(model, runs)
    calibration = calibrate(model, data, device=device.name, nonnegative=args.nonnegative)
    calibration = dataclasses.replace(calibration, subgroup_size=size)  # predict counts alike
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
        "subgroup_size": size,
        "out": str(args.out),
    }
    if args.json:
        render.print_json(report)
        if line := negative_warning(calibration):
            print(line, file=sys.stderr)
        return 0
    console.print(f"{device.name}: {calibration.n_measurements} measurements, residual "
                  f"{calibration.residual:.3g} (sub-group {size})", highlight=False,
                  markup=False)  # fmt: skip
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
    line = negative_warning(calibration)
    if line:
        console.print(line, style="bold red", highlight=False, markup=False)


def negative_warning(calibration: Any) -> str | None:
    """The WARNING line of a calibration with a negative cost (on stderr with --json, so the
    output stays one JSON document); None where every cost is >= 0."""
    if not calibration.negative:
        return None
    costs = ", ".join(f"{p} = {calibration.parameters[p]:.3g}" for p in calibration.negative)
    return (f"WARNING {calibration.device}: nonnegative: false ({costs} < 0): the measurements "
            "do not separate these costs; predictions that use them are unreliable")  # fmt: skip


def run_predict(args: argparse.Namespace, console: Console) -> int:
    from perfport.model import Calibration, StatsCache, input_features, predict
    from perfport.model.coverage import uncovered
    from perfport.model.loopy_file import load_kernel

    calibration = Calibration.load(args.calibration)
    sizes = _sizes(args.problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loopy's notes are kept in the stats' approximations
        program = load_kernel(args.kernel, args.config, sizes)
        width = args.subgroup_size or calibration.subgroup_size  # counted as it was
        stats = StatsCache(_cache_folder()).stats(program, subgroup_size(width))
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
        "subgroup_size": stats.subgroup_size,
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


def checked(stats: Any, sizes: Mapping[str, int], flag: str = "--problem") -> Any:
    """``stats`` evaluated at ``sizes``, refused in one line where the kernel has no such
    size, lacks one (to be given with ``flag``), or its assumptions exclude them."""
    unknown = sorted(set(sizes) - set(stats.params))
    if unknown:
        raise PerfportError(f"kernel {stats.kernel} has no size {unknown[0]}; its sizes are "
                            f"{', '.join(stats.params) or 'none'}")  # fmt: skip
    missing = [p for p in stats.params if p not in sizes]
    if missing:
        raise PerfportError(f"kernel {stats.kernel} needs a value for {', '.join(missing)}; "
                            f"give {flag} {missing[0]}=VALUE")  # fmt: skip
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
        checked(stats, dict(problem), "--sizes")
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
