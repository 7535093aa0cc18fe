"""``perfport wg ...``: work-group-size prediction (cummins2016), from collection to evaluation."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import perfport
from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    add_problem,
    count,
    natural,
    parse_assignment,
    seconds,
    sizes,
)
from perfport.cli.deferred import Deferred

if TYPE_CHECKING:
    from rich.console import Console

    from perfport.devices import get_device
    from perfport.kernels import resolve_kernel
    from perfport.store import Store
    from perfport.tune import resolve_problem
else:  # used as module globals; imported on first use so that --help imports none of them
    get_device = Deferred("perfport.devices", "get_device")
    resolve_kernel = Deferred("perfport.kernels", "resolve_kernel")
    Store = Deferred("perfport.store", "Store")
    resolve_problem = Deferred("perfport.tune", "resolve_problem")


def add_parser(sub: Subcommands) -> None:
    wg = sub.add_parser("wg", help="work-group-size prediction (cummins2016)")
    wg_sub = wg.add_subparsers(dest="wg_command", required=True, metavar="COMMAND")
    _add_collect(wg_sub)
    _add_dataset(wg_sub)
    _add_train(wg_sub)
    _add_predict(wg_sub)
    _add_evaluate(wg_sub)


def _add_collect(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("collect", help="measure every work-group size of many stencil scenarios")
    p.add_argument("--device", help="device id (default: the default device)")
    p.add_argument(
        "--scenarios", type=count, default=60, help="how many scenarios (real-world first)"
    )
    p.add_argument(
        "--sizes", type=sizes, default=(512, 1024, 2048, 4096), help="data sizes (square)"
    )
    p.add_argument(
        "--max-border",
        type=natural,
        default=30,
        help="synthetic borders drawn from 0,1,2,3,5,10,20,30 up to this (default 30: the "
        "paper's range; 5 collects compact stencils like most real ones)",
    )
    p.add_argument(
        "--no-real-world",
        dest="real_world",
        action="store_false",
        help="synthetic scenarios only (the real-world kernels are the usual test set)",
    )
    p.add_argument("--repeats", type=count, default=5, help="timed launches per size and round")
    p.add_argument(
        "--rounds",
        type=count,
        default=1,
        help="measure every size this many times, interleaved in random order (default 1)",
    )
    p.add_argument(
        "--max-time", type=seconds, metavar="SECONDS", help="start no scenario after this"
    )
    p.add_argument("--seed", type=natural, default=0, help="seed of the synthetic scenarios")
    p.add_argument("--db", default="perfport.db")
    p.add_argument("--json", action="store_true", help="print JSON lines, one per scenario")
    p.set_defaults(run=run_collect)


def _add_dataset(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("dataset", help="write the stored stencil campaigns as a dataset (.npz)")
    p.add_argument(
        "--db", action="append", help="a store (repeat to merge several; default perfport.db)"
    )
    p.add_argument(
        "--merge",
        action="append",
        metavar="NPZ",
        help="a dataset already written (.npz) whose scenarios come first; repeatable",
    )
    p.add_argument(
        "--drop-device",
        action="append",
        metavar="DEVICE",
        help="leave out the --merge scenarios of this device label (to replace them); repeatable",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="a --db scenario that a --merge dataset has replaces its times (a re-measurement)",
    )
    p.add_argument(
        "--superseded", metavar="NPZ", help="with --replace: write the replaced rows here"
    )
    p.add_argument("--out", required=True, help="the .npz file to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_dataset)


def _add_train(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("train", help="train a predictor on a dataset and save it")
    p.add_argument("--data", required=True, help="a dataset (.npz from 'wg dataset')")
    p.add_argument(
        "--method", default="performance_forest+novel", help="see 'perfport wg evaluate --help'"
    )
    p.add_argument("--out", required=True, help="the model file to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_train)


def _add_predict(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("predict", help="a work-group size for a stencil on a device")
    p.add_argument(
        "--kernel", required=True,
        help="a stencil kernel: built-in name, spec file or stencil description (.json)",
    )  # fmt: skip
    p.add_argument("--device", help="device id (default: the default device)")
    add_problem(p)
    p.add_argument(
        "--model", help="a model from 'perfport wg train' (default: trained on the shipped data)"
    )
    p.add_argument("--db", default="perfport.db", help="sizes refused here before are avoided")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_predict)


def _add_evaluate(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("evaluate", help="evaluate the predictors on a work-group-size dataset")
    p.add_argument(
        "--data", help="a dataset (.npz from 'wg dataset', a runtimes.csv), or 'cummins-pilot'"
    )
    p.add_argument("--methods", help="comma-separated methods (default: all; see docs/wg.md)")
    p.add_argument(
        "--partitions", help="comma-separated: 10-fold,synthetic-real,device,kernel,dataset"
    )
    p.add_argument(
        "--plots", metavar="DIR", help="also write the figures (oracle, refusals, violins)"
    )
    p.add_argument(
        "--by-device", action="store_true", help="also the performance per device set-up"
    )
    p.add_argument(
        "--seed", type=natural, default=0, help="seed of the 10-fold split and of the forests"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_evaluate)


def run_collect(args: argparse.Namespace, console: Console) -> int:
    from perfport.tune.wg_collect import collect, scenarios

    try:
        chosen = scenarios(args.scenarios, args.sizes, args.seed, args.max_border, args.real_world)
    except ValueError as exc:
        raise PerfportError(f"--scenarios: {exc}") from None
    device = get_device(args.device)
    steps = collect(device, chosen, args.db, args.repeats, args.max_time, args.rounds)
    for n, step in enumerate(steps, 1):
        if args.json:
            print(json.dumps({"scenario": step.scenario.label, "measured": step.measured,
                              "outcomes": step.outcomes, "seconds": round(step.seconds, 1)}), flush=True)  # fmt: skip
        else:
            failed = {k: v for k, v in step.outcomes.items() if v and k != "ok"}
            console.print(
                f"[{n}/{len(chosen)}] {step.scenario.label}: {step.measured} sizes in {step.seconds:.0f} s {failed or ''}"
            )
    return 0


def run_dataset(args: argparse.Namespace, console: Console) -> int:
    import numpy as np

    from perfport.models import dataset_from_store, save_dataset
    from perfport.models.wgdata import load_dataset, merge_datasets, replace_scenarios

    if args.replace and not (args.merge and args.db):
        raise PerfportError("--replace needs --merge (the dataset) and --db (the re-measurement)")
    if args.superseded and not args.replace:
        raise PerfportError("--superseded names where --replace puts the old rows; add --replace")
    parts = [load_dataset(path) for path in args.merge or []]
    if args.drop_device:
        labels = {str(d) for part in parts for d in part.device}
        unknown = sorted(set(args.drop_device) - labels)
        if unknown:
            raise PerfportError(
                f"--drop-device: no --merge scenario is on {', '.join(unknown)}; "
                f"their devices: {', '.join(sorted(labels))}"
            )
        parts = [p.subset(np.flatnonzero(~np.isin(p.device, args.drop_device))) for p in parts]
    stored = []
    for db in args.db or ([] if args.merge else ["perfport.db"]):
        with Store(db, create=False) as store:
            stored.append(dataset_from_store(store))
    replaced = 0
    if args.replace:
        data, old = replace_scenarios(merge_datasets(parts), merge_datasets(stored))
        replaced = len(old)
        if args.superseded:
            save_dataset(old, args.superseded)
    else:
        data = merge_datasets(parts + stored)
    save_dataset(data, args.out)
    summary = {"out": args.out, "scenarios": len(data), "sizes": int(data.runtimes.shape[1]),
               "devices": sorted(set(data.device.tolist())), "measured": int(data.legal.sum()),
               "replaced": replaced}  # fmt: skip
    if args.json:
        render.print_json(summary)
    else:
        console.print(
            f"wrote {summary['scenarios']} scenarios on {len(summary['devices'])} device(s) to "
            f"{args.out}" + (f" ({replaced} replaced)" if args.replace else "")
        )
    return 0


def run_train(args: argparse.Namespace, console: Console) -> int:
    from perfport.models import METHODS, load_dataset
    from perfport.models.wgmodel import train

    if args.method not in METHODS:
        raise PerfportError(f"unknown method {args.method}; methods: {', '.join(METHODS)}")
    model = train(load_dataset(_wg_data_path(args.data)), args.method)
    model.save(args.out)
    summary = {
        "out": args.out,
        "method": model.method,
        "scenarios": model.scenarios,
        "sizes": len(model.sizes),
    }
    if args.json:
        render.print_json(summary)
    else:
        console.print(f"trained {model.method} on {model.scenarios} scenarios; wrote {args.out}")
    return 0


def run_predict(args: argparse.Namespace, console: Console) -> int:
    from perfport.tune.wg_predict import check_scenario, predict_wg, refused_sizes

    spec = resolve_kernel(args.kernel)
    problem = resolve_problem(spec, dict(parse_assignment(p) for p in args.problem))
    device = get_device(args.device, spec.language)
    check_scenario(spec, problem, device)  # bad input is refused before a model is trained
    model = _wg_model(args.model)
    prediction = predict_wg(model, spec, problem, device, refused_sizes(args.db, spec, device))
    if args.json:
        render.print_json(prediction.to_json())
    else:
        wc, wr = prediction.wg
        novel = "; novel: a kernel or device unlike those trained on" if prediction.novel else ""
        console.print(
            f"{spec.name} on {device.id}: work-group {wc} x {wr} ({prediction.method}, {prediction.predict_ms:.1f} ms{novel})"
        )
    return 0


WG_DATA = "wg/stencils.npz"  # the work-group dataset perfport ships (see datasets/PROVENANCE.md)
WG_METHOD = "performance_forest+novel"  # the method of the default model (docs/wg.md)


def _shipped(name: str) -> Path:
    return Path(str(resources.files("perfport").joinpath("datasets", name)))


def _wg_data_path(name: str | None) -> Path:
    if name is None:
        return _shipped(WG_DATA)
    if name != "cummins-pilot":
        return Path(name)
    roots = [
        os.environ.get("PERFPORT_SHARED_DATA"),
        "../shared/data",
        Path(__file__).parents[4] / "shared" / "data",
    ]
    for root in filter(None, roots):
        path = Path(root) / "cummins-omnitune-wgsize" / "simplebig_runtimes.csv"
        if path.is_file():
            return path
    raise PerfportError(
        "Cummins' pilot data not found: set PERFPORT_SHARED_DATA to the folder holding cummins-omnitune-wgsize/"
    )


def _wg_model(path: str | None) -> Any:
    """The model at ``path``; by default ``WG_METHOD`` trained on the shipped dataset, trained
    on first use (a few seconds) and cached (pickles are tied to the library versions
    that wrote them, which are part of the cache key)."""
    from perfport.models.wgdata import load_dataset
    from perfport.models.wgmodel import load_model, train

    if path:
        return load_model(path)
    import hashlib

    from perfport._core.optional import require

    sklearn = require("sklearn", "models", "Work-group-size models")
    data = _shipped(WG_DATA)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfport"
    cached = (
        cache / f"wg-{WG_METHOD}-{digest}-{perfport.__version__}-sklearn{sklearn.__version__}.pkl"
    )
    if cached.is_file():
        return load_model(cached)
    print("perfport: training the default work-group model on the shipped data (once)...",
          file=sys.stderr, flush=True)  # fmt: skip
    model = train(load_dataset(data), WG_METHOD)
    with contextlib.suppress(OSError):  # no cache is slower, not wrong
        cache.mkdir(parents=True, exist_ok=True)
        staging = cached.with_suffix(f".tmp{os.getpid()}")
        model.save(staging)
        os.replace(staging, cached)
    return model


def _listed(text: str | None, known: Sequence[str], flag: str) -> list[str]:
    """A comma-separated choice among ``known`` (all of them when the flag is not given)."""
    if text is None:
        return list(known)
    wanted = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in known]
    if unknown or not wanted:
        what = f"unknown {', '.join(unknown)}" if unknown else "give at least one"
        raise PerfportError(f"{flag}: {what}; choose from {', '.join(known)}")
    return wanted


def run_evaluate(args: argparse.Namespace, console: Console) -> int:
    from perfport.models import METHODS, PARTITIONS, evaluate, load_dataset

    data = load_dataset(_wg_data_path(args.data))
    methods = _listed(args.methods, METHODS, "--methods")
    partitions = _listed(args.partitions, PARTITIONS, "--partitions")
    results = evaluate(data, methods, partitions, seed=args.seed)
    skipped = [p for p in partitions if p not in {r.partition for r in results}]
    why = ("a leave-one-out partition needs at least two devices, kernels or data sizes, and "
           "synthetic-real both synthetic and real-world kernels")  # fmt: skip
    if not results:
        raise PerfportError(f"no partition of {', '.join(partitions)} can be evaluated on this "
                            f"data: {why}")  # fmt: skip
    if skipped:
        print(f"perfport: skipped {', '.join(skipped)}: {why}", file=sys.stderr)
    if args.plots:
        from perfport.models import plots

        out = Path(args.plots)
        out.mkdir(parents=True, exist_ok=True)
        plots.oracle_heatmap(data, out / "oracle_heatmap.png")
        plots.refused_ratio(data, out / "refused_per_device.png")
        plots.expert_violins(results, out / "speedup_over_expert.png")
    if args.json:
        render.print_json({"results": [r.to_json(per_device=args.by_device) for r in results]})
    else:
        render.wg_table(console, results)
        if args.by_device:
            render.wg_device_table(console, results)
    return 0
