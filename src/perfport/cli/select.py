"""``perfport select ...``: deployable kernel subsets and runtime selectors (lawson)."""

from __future__ import annotations

import argparse
import math
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport._core import PerfportError
from perfport._core.optional import require
from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    check_folder,
    check_output,
    database,
    natural,
    problem_values,
)

if TYPE_CHECKING:
    from rich.console import Console

# perfport.select.across_devices.Method's values, spelled out so the CLI starts without importing
# the selection stack (tests/select checks they agree).
PORTABLE_METHODS = ("portable", "greedy_geomean", "clustered", "most_often_best", "greedy_mean",
                    "maximin", "perturbed")  # fmt: skip

_DATA_HELP = "a table (.csv.gz from 'select export') or a perfport store (.db); default: the shipped H100 GEMM data"


def add_parser(sub: Subcommands) -> None:
    sel = sub.add_parser("select", help="deployable kernel subsets and runtime selectors (lawson)")
    sel_sub = sel.add_subparsers(dest="select_command", required=True, metavar="COMMAND")
    _add_evaluate(sel_sub)
    _add_fit(sel_sub)
    _add_predict(sel_sub)
    _add_export(sel_sub)
    _add_portable(sel_sub)


def _add_evaluate(sel_sub: Subcommands) -> None:
    p = sel_sub.add_parser(
        "evaluate", help="score normalisations x prunings x classifiers on held-out problems"
    )
    p.add_argument("--data", help=_DATA_HELP)
    p.add_argument(
        "--kernels", default="4,6,8,15", metavar="K,K,...", help="set sizes (default 4,6,8,15)"
    )
    p.add_argument("--normalisations", help="comma-separated (default: all)")
    p.add_argument("--prunings", help="comma-separated (default: all)")
    p.add_argument("--classifiers", help="comma-separated (default: all)")
    p.add_argument("--seed", type=natural, default=0, help="seed of the train/test split")
    p.add_argument("--plots", metavar="DIR", help="also write the paper's figures here")
    _add_store_choice(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_evaluate)


def _add_store_choice(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", help="with a store (.db) --data: the kernel, when it holds several")
    p.add_argument("--device", help="with a store (.db) --data: the device, when it holds several")
    _add_problem_filter(p)


def _add_problem_filter(p: argparse.ArgumentParser) -> None:
    p.add_argument("--problem", nargs="+", action="extend", metavar="NAME=VALUE",
                   help="keep only the problems with these values, e.g. --problem dtype=float "
                   "(a value that varies and is not a number must be chosen so)")  # fmt: skip


def _add_fit(sel_sub: Subcommands) -> None:
    p = sel_sub.add_parser("fit", help="choose k configurations and write a deployment bundle")
    p.add_argument("--data", required=True,
                   help="a table (.csv.gz from 'select export') or a perfport store (.db)")  # fmt: skip
    p.add_argument("--kernels", type=int, required=True, metavar="K", help="configurations to ship")
    p.add_argument("--out", required=True, metavar="DIR", help="the bundle directory")
    p.add_argument(
        "--normalisation", default="relative",
        help="how times become scores: relative (t_best / t, the default), raw_cutoff, "
        "standard_cutoff or sigmoid",
    )  # fmt: skip
    p.add_argument("--pruning", default="greedy", help="how the set is chosen (default: greedy)")
    p.add_argument("--classifier", default="decision_tree_distilled_derived",
                   help="a decision tree: decision_tree_a, _b, _c, a or b _derived, "
                   "decision_tree_regret_derived, or decision_tree_distilled_derived "
                   "(the default)")  # fmt: skip
    p.add_argument("--seed", type=natural, default=0, help="seed of the pruning and classifier")
    p.add_argument("--spec", metavar="FILE", help="your kernel's spec file: recorded in the bundle "
                   "so a Dispatcher and 'select predict' find it")  # fmt: skip
    _add_store_choice(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_fit)


def _add_predict(sel_sub: Subcommands) -> None:
    p = sel_sub.add_parser("predict", help="the configuration a bundle picks for a problem")
    p.add_argument(
        "--bundle", required=True, metavar="DIR", help="a bundle directory from 'select fit'"
    )
    p.add_argument("--problem", nargs="+", action="extend", required=True, metavar="NAME=VALUE",
                   help="problem values, e.g. --problem M=128 N=3136 K=576")  # fmt: skip
    p.add_argument("--spec", metavar="FILE", help="the kernel's spec, to check the pick against its "
                   "restrictions (default: the built-in, or the spec file 'select fit --spec' recorded)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_predict)


def _add_export(sel_sub: Subcommands) -> None:
    p = sel_sub.add_parser("export", help="write a store's sweep results as a table (.csv.gz)")
    p.add_argument(
        "--db", type=database, required=True, help="the results database holding the sweep"
    )
    p.add_argument("--out", required=True, help="the .csv.gz to write")
    p.add_argument("--kernel", help="the kernel, when the store holds several")
    p.add_argument(
        "--device", help="the device (name, fingerprint or id), when the store holds several"
    )
    _add_problem_filter(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_export)


def _add_portable(sel_sub: Subcommands) -> None:
    p = sel_sub.add_parser(
        "portable", help="k configurations for every GPU, from Kernel Tuner caches"
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="Kernel Tuner caches of one kernel")
    p.add_argument("--kernels", type=int, required=True, metavar="K", help="configurations to ship")
    p.add_argument("--holdout", metavar="FILE", help="choose without this device, then score it")
    p.add_argument("--method", choices=PORTABLE_METHODS, default="portable",
                   help="how the set is chosen (docs/select.md; default: portable)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_portable)


SHIPPED = "lawson-gemm/h100-nvidia-opencl.csv.gz"


def _table(args: argparse.Namespace) -> Any:
    from perfport.select import from_store, load_csv

    path = None if args.data is None else Path(args.data)
    if path is not None and not path.is_file():
        raise PerfportError(
            f"no data file {args.data}; give a .csv.gz table or a perfport store (.db)"
        )
    store = path is not None and _is_store(path)
    if (args.kernel or args.device) and not store:
        raise PerfportError("--kernel and --device choose within a perfport store; give one "
                            "as --data (.db), or drop them")  # fmt: skip
    problem = problem_values(args.problem) if args.problem else None
    if path is None:
        with resources.as_file(resources.files("perfport").joinpath("datasets", SHIPPED)) as p:
            return load_csv(p, problem)
    if store:
        return from_store(path, kernel=args.kernel, device=args.device, problem=problem)
    return load_csv(path, problem)


def _is_store(path: Path) -> bool:
    """A perfport store, told by its content (SQLite's header) whatever its name; or an empty
    .db (SQLite's empty database)."""
    with path.open("rb") as f:
        head = f.read(16)
    return head == b"SQLite format 3\x00" or (not head and path.suffix == ".db")


def _names(text: str | None, enum: Any, what: str) -> list[Any]:
    if text is None:
        return list(enum)
    known = {e.value: e for e in enum}
    wanted = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in known]
    if unknown or not wanted:
        raise PerfportError(
            f"unknown {what} {', '.join(unknown) or '(none)'}; choose from {', '.join(known)}"
        )
    return [known[t] for t in wanted]


def _ks(text: str) -> list[int]:
    try:
        ks = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        ks = []
    if not ks or min(ks) < 1:
        raise PerfportError(f"--kernels expects set sizes like 4,6,8,15, got {text!r}")
    return ks


def run_evaluate(args: argparse.Namespace, console: Console) -> int:
    from rich.table import Table

    from perfport.select import Classifier, Normalisation, Pruning, evaluate, to_json

    check_folder(args.plots, "--plots")
    if args.plots:  # before the evaluation, not once it has run (minutes)
        require("matplotlib", "plots", "--plots")
    table = _table(args)
    results = evaluate(
        table,
        _names(args.normalisations, Normalisation, "normalisation"),
        _names(args.prunings, Pruning, "pruning"),
        _names(args.classifiers, Classifier, "classifier"),
        _ks(args.kernels),
        seed=args.seed,
    )
    if args.plots:
        from perfport.select.plots import plot_classifiers, plot_pruning

        out = Path(args.plots)
        out.mkdir(parents=True, exist_ok=True)
        plot_pruning(results, out / "pruning.png", title=table.device)
        # The paper's chart is for relative performance and PCA + k-means; else what was run.
        norm = next((r.normalisation for r in results if r.normalisation == "relative"),
                    results[0].normalisation)  # fmt: skip
        pruning = next((r.pruning for r in results
                        if r.normalisation == norm and r.pruning == "pca_kmeans"),
                       next(r.pruning for r in results if r.normalisation == norm))  # fmt: skip
        plot_classifiers(results, out / "classifiers.png", norm, pruning, title=table.device)
    if args.json:
        render.print_json(to_json(results))
        return 0
    view = Table(title=f"kernel subsets on held-out problems: {table.kernel} on {table.device}")
    numbers = ("k", "performance", "95% CI", "max achievable")
    for col in ("normalisation", "pruning", "classifier", *numbers):
        view.add_column(col, justify="right" if col in numbers else "left")
    for r in sorted(results, key=lambda r: -r.performance):
        low, high = r.performance_ci95
        interval = f"{low:.3f}-{high:.3f}" if math.isfinite(low) else "-"  # one test problem
        view.add_row(r.normalisation, r.pruning, r.classifier, str(r.k),
                     f"{r.performance:.3f}", interval, f"{r.max_achievable:.3f}")  # fmt: skip
    console.print(view)
    return 0


def run_fit(args: argparse.Namespace, console: Console) -> int:
    from perfport.select.deploy import fit_bundle

    bundle = fit_bundle(
        _table(args), args.kernels, args.out, args.normalisation, args.pruning,
        args.classifier, args.seed, args.spec,
    )  # fmt: skip
    shipped = len(bundle.configs)
    if shipped < args.kernels:  # "k" in the JSON is what is shipped; say why it is fewer
        print(f"perfport: only {shipped} of the table's configurations ran correctly at any "
              f"problem; shipping those, not {args.kernels}", file=sys.stderr)  # fmt: skip
    summary = {
        "out": str(bundle.path),
        "kernel": bundle.kernel,
        "k": shipped,
        "configs": [dict(c) for c in bundle.configs],
        "features": list(bundle.features),
        "metadata": dict(bundle.metadata),
        "unchecked_rules": list(bundle.unchecked_rules),
    }
    rules_from = str(bundle.metadata.get("rules_from", ""))
    if args.spec is None and rules_from.startswith("built-in "):  # a guess by name: say so
        print(f"perfport: note: checked the rules of the {rules_from} (no --spec given); give "
              "--spec FILE if this is a kernel of your own", file=sys.stderr)  # fmt: skip
    if bundle.unchecked_rules:  # stderr: in JSON mode stdout holds only the JSON
        print(f"perfport: the generated legal() does not check: "
              f"{'; '.join(bundle.unchecked_rules)[:400]}", file=sys.stderr)  # fmt: skip
    if args.json:
        render.print_json(summary)
    else:
        console.print(f"wrote {bundle.path}: {len(bundle.configs)} configurations of {bundle.kernel}, "
                      f"selector in selector.c/.h/.py")  # fmt: skip
        for c in bundle.configs:
            console.print("  " + " ".join(f"{k}={v}" for k, v in c.items()))
    return 0


def run_predict(args: argparse.Namespace, console: Console) -> int:
    import time

    from perfport.select.bundle import load_bundle
    from perfport.select.problem_values import typed_values

    bundle = load_bundle(args.bundle)
    problem = problem_values(args.problem)
    fixed = bundle.fixed_problem  # taken, though no input: the data held them at one value
    unknown = sorted(set(problem) - set(bundle.features) - set(fixed))
    if unknown:  # a typo here would otherwise be ignored silently (the library allows extras)
        also = f" (and takes {', '.join(sorted(fixed))}, fitted at one value)" if fixed else ""
        raise PerfportError(f"the bundle's selector reads {', '.join(bundle.features)}{also}; "
                            f"not {', '.join(unknown)}")  # fmt: skip
    spec = _known_spec(bundle, args.spec)
    if spec is not None:  # a Dispatcher's rule: trans_a=0 is the flag, M=512.0 the size
        problem = typed_values(spec, problem)
    notes = bundle.off_fitted(problem)
    for note in notes:  # stderr: in JSON mode stdout holds only the JSON
        print(f"perfport: note: {note}", file=sys.stderr)
    started = time.perf_counter()
    index = bundle.choose(problem)
    predict_ms = (time.perf_counter() - started) * 1000.0
    config = dict(bundle.configs[index])
    legality = _legality(bundle, problem, spec)
    if args.json:
        render.print_json({"config": config, "index": index, "predict_ms": predict_ms, **legality,
                           "notes": list(notes)})  # fmt: skip
        return 0
    console.print(" ".join(f"{k}={v}" for k, v in config.items()), markup=False)
    fallback = legality["fallback"]
    if fallback is not None:
        shown = " ".join(f"{k}={v}" for k, v in fallback["config"].items())
        console.print(f"  illegal at this problem (breaks {legality['illegal']}); a Dispatcher "
                      f"launches shipped configuration {fallback['index']} instead: {shown}",
                      markup=False)  # fmt: skip
    return 0


def _known_spec(bundle: Any, spec_file: str | None) -> Any:
    """The bundle's kernel spec (``--spec``, else as a Dispatcher finds it); None, said on
    stderr, where it is unknown."""
    from perfport.select.dispatch import bundle_spec
    from perfport.select.errors import SelectError

    try:
        return bundle_spec(bundle, spec_file)
    except SelectError:
        if spec_file is not None:
            raise
        print("perfport: not checked against the kernel's restrictions; give --spec FILE",
              file=sys.stderr)  # fmt: skip
        return None


def _legality(bundle: Any, problem: dict[str, Any], spec: Any) -> dict[str, Any]:
    """Whether the pick may launch at ``problem`` (in ``spec``'s types) under the kernel's
    restrictions (no device: its limits are not known here), and the shipped configuration
    launched instead where not. ``legal`` is None where the kernel's spec is unknown."""
    from perfport._core import SpecError
    from perfport.select.dispatch import array_sizes
    from perfport.select.errors import SelectError
    from perfport.select.legality import Legality, legal_choice
    from perfport.tune.checks import resolve_problem

    unknown: dict[str, Any] = {"legal": None, "illegal": None, "fallback": None}
    if spec is None:
        return unknown
    try:
        full = resolve_problem(spec, problem)
    except PerfportError as exc:  # not a problem the kernel runs: nothing to check
        print(f"perfport: not checked against the kernel's restrictions: {exc}", file=sys.stderr)
        return unknown
    choice = legal_choice(bundle, Legality(spec), full)
    try:  # what a Dispatcher refuses (an array of n=-5 elements), predict refuses too
        array_sizes(spec, spec.env(bundle.configs[choice.index], full))
    except SpecError as exc:
        raise SelectError(str(exc)) from None
    fallback = (
        {"index": choice.index, "config": dict(bundle.configs[choice.index])}
        if choice.fell_back
        else None
    )
    return {"legal": not choice.illegal, "illegal": choice.illegal or None, "fallback": fallback}


def run_export(args: argparse.Namespace, console: Console) -> int:
    from perfport.select import from_store, save_csv

    check_output(args.out, "--out")
    problem = problem_values(args.problem) if args.problem else None
    table = from_store(args.db, kernel=args.kernel, device=args.device, problem=problem)
    save_csv(table, args.out)
    summary = {"out": args.out, "kernel": table.kernel, "device": table.device,
               "problems": table.n_problems, "configs": table.n_configs}  # fmt: skip
    if args.json:
        render.print_json(summary)
    else:
        console.print(f"wrote {args.out}: {table.n_problems} problems x {table.n_configs} "
                      f"configurations of {table.kernel} on {table.device}")  # fmt: skip
    return 0


def run_portable(args: argparse.Namespace, console: Console) -> int:
    from perfport.select.across_devices import portable

    result = portable(args.files, args.kernels, holdout=args.holdout, method=args.method)
    shipped = "1 configuration" if result.k == 1 else f"{result.k} configurations"
    if result.k < args.kernels:  # "k" in the JSON is what is shipped; say why it is fewer
        print(f"perfport: only {shipped} ran on every training device; shipping those, "
              f"not {args.kernels}", file=sys.stderr)  # fmt: skip
    if args.json:
        render.print_json(result.to_json())
        return 0
    console.print(f"{shipped} for every device (geometric mean {result.geomean:.3f}):")
    for c in result.configs:
        console.print("  " + " ".join(f"{k}={v}" for k, v in c.items()), markup=False)
    if result.fixed:  # the same in every cache: not a choice, but part of each configuration
        fixed = " ".join(f"{k}={v}" for k, v in result.fixed.items())
        console.print(f"  fixed in every cache: {fixed}", markup=False)
    for device, fraction in result.per_device.items():
        held = " (held out: the set was chosen without it)" if device == result.holdout else ""
        console.print(f"  {device}: {fraction:.3f} of its optimum{held}", markup=False)
    return 0
