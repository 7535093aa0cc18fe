"""The ``perfport select ...`` commands (Lawson's kernel-subset selection)."""

from __future__ import annotations

import argparse
import math
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from perfport._core import PerfportError
from perfport.cli import parse_assignment, render

SHIPPED = "lawson-gemm/h100-nvidia-opencl.csv.gz"


def _table(data: str | None) -> Any:
    from perfport.select import from_store, load_csv

    if data is None:
        with resources.as_file(resources.files("perfport").joinpath("datasets", SHIPPED)) as p:
            return load_csv(p)
    path = Path(data)
    if not path.is_file():
        raise PerfportError(f"no data file {data}; give a .csv.gz table or a perfport store (.db)")
    return from_store(path) if path.suffix == ".db" else load_csv(path)


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


def cmd_select_evaluate(args: argparse.Namespace, console: Console) -> int:
    from perfport.select import Classifier, Normalisation, Pruning, evaluate, to_json

    table = _table(args.data)
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


def cmd_select_fit(args: argparse.Namespace, console: Console) -> int:
    from perfport.select.deploy import fit_bundle

    bundle = fit_bundle(
        _table(args.data), args.kernels, args.out, args.normalisation, args.pruning,
        args.classifier, args.seed,
    )  # fmt: skip
    summary = {
        "out": str(bundle.path),
        "kernel": bundle.kernel,
        "configs": [dict(c) for c in bundle.configs],
        "features": list(bundle.features),
        "metadata": dict(bundle.metadata),
    }
    if args.json:
        render.print_json(summary)
    else:
        console.print(f"wrote {bundle.path}: {len(bundle.configs)} configurations of {bundle.kernel}, "
                      f"selector in selector.c/.h/.py")  # fmt: skip
        for c in bundle.configs:
            console.print("  " + " ".join(f"{k}={v}" for k, v in c.items()))
    return 0


def cmd_select_predict(args: argparse.Namespace, console: Console) -> int:
    import time

    from perfport.select.bundle import load_bundle

    bundle = load_bundle(args.bundle)
    problem = dict(parse_assignment(p) for p in args.problem)
    unknown = sorted(set(problem) - set(bundle.features))
    if unknown:  # a typo here would otherwise be ignored silently (the library allows extras)
        raise PerfportError(
            f"the bundle's selector reads {', '.join(bundle.features)}; not {', '.join(unknown)}"
        )
    started = time.perf_counter()
    index = bundle.choose(problem)
    predict_ms = (time.perf_counter() - started) * 1000.0
    config = dict(bundle.configs[index])
    if args.json:
        render.print_json({"config": config, "index": index, "predict_ms": predict_ms})
    else:
        console.print(" ".join(f"{k}={v}" for k, v in config.items()))
    return 0


def cmd_select_export(args: argparse.Namespace, console: Console) -> int:
    from perfport.select import from_store, save_csv

    table = from_store(args.db, kernel=args.kernel, device=args.device)
    save_csv(table, args.out)
    summary = {"out": args.out, "kernel": table.kernel, "device": table.device,
               "problems": table.n_problems, "configs": table.n_configs}  # fmt: skip
    if args.json:
        render.print_json(summary)
    else:
        console.print(f"wrote {args.out}: {table.n_problems} problems x {table.n_configs} "
                      f"configurations of {table.kernel} on {table.device}")  # fmt: skip
    return 0


def cmd_select_portable(args: argparse.Namespace, console: Console) -> int:
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
        console.print(f"  {device}: {fraction:.3f} of its optimum", markup=False)
    return 0
