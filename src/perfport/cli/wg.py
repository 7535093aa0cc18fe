"""``perfport wg ...``: work-group-size prediction (cummins2016), from collection to evaluation.
The handlers import the wg capability when they run, so that ``--help`` imports none of it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perfport._core import PerfportError
from perfport.cli import render
from perfport.cli.arguments import (
    Subcommands,
    add_problem,
    check_output,
    count,
    database,
    natural,
    problem_values,
    repeats,
    seconds,
    sizes,
)
from perfport.cli.wg_evaluate import run_evaluate, wg_data_path

if TYPE_CHECKING:
    from rich.console import Console

    from perfport import wg
    from perfport._core import KernelSpec


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
    p.add_argument("--repeats", type=repeats, default=5, help="timed launches per size and round")
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
    p.add_argument(
        "--db",
        type=database,
        default="perfport.db",
        help="results database to store into (default: perfport.db)",
    )
    p.add_argument("--json", action="store_true", help="print JSON lines, one per scenario")
    p.set_defaults(run=run_collect)


def _add_dataset(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("dataset", help="write the stored stencil campaigns as a dataset (.npz)")
    p.add_argument(
        "--db",
        type=database,
        action="append",
        help="a store (repeat to merge several; default perfport.db)",
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
        "--superseded",
        metavar="NPZ",
        help="with --replace: add the replaced rows to this file (created if missing)",
    )
    p.add_argument("--out", required=True, help="the .npz file to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_dataset)


_DATA_HELP = (
    "a dataset (.npz from 'wg dataset', a runtimes.csv), or 'cummins-pilot' (Cummins' data, "
    "not shipped: in the folder PERFPORT_SHARED_DATA names; see docs/wg.md)"
)


def _add_train(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("train", help="train a predictor on a dataset and save it")
    p.add_argument("--data", required=True, help=_DATA_HELP)
    p.add_argument(
        "--method", default="performance_forest+novel", help="see 'perfport wg evaluate --help'"
    )
    p.add_argument("--out", required=True, help="the model file to write")
    p.add_argument(
        "--compile-free",
        action="store_true",
        help="train on the features that need no compile (device, borders, data): its "
        "predictions need neither PoCL nor llvmlite (see docs/wg.md)",
    )
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
        "--model",
        help="a model from 'perfport wg train' (default: trained on the shipped data); a model "
        "file is a pickle and runs code when loaded: load only files you made or trust",
    )
    p.add_argument(
        "--db",
        type=database,
        help="sizes refused here before are avoided (default: perfport.db, where it exists)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_predict)


def _add_evaluate(wg_sub: Subcommands) -> None:
    p = wg_sub.add_parser("evaluate", help="evaluate the predictors on a work-group-size dataset")
    p.add_argument("--data", help=f"{_DATA_HELP}; default: the shipped dataset")
    p.add_argument(
        "--methods",
        help="comma-separated methods, or 'all' (the paper's full grid, some 40 minutes); "
        "default: the default model, performance_forest+novel (see docs/wg.md)",
    )
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
    p.add_argument(
        "--samples",
        action="append",
        metavar="FILE",
        help="a *.samples.npz of the rounds behind the data's table (repeatable): also score "
        "the choices on held-out rounds (fastest size picked on half the rounds, both timed "
        "on the other half; docs/wg.md)",
    )
    p.add_argument(
        "--split",
        choices=("halves", "alternate"),
        help="with --samples: the first half of the rounds against the second (halves, the "
        "default), or even against odd rounds",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_evaluate)


def run_collect(args: argparse.Namespace, console: Console) -> int:
    from perfport import wg
    from perfport.devices import get_device
    from perfport.wg.scenarios import scenarios

    try:
        chosen = scenarios(args.scenarios, args.sizes, args.seed, args.max_border, args.real_world)
    except ValueError as exc:
        raise PerfportError(f"--scenarios: {exc}") from None
    device = get_device(args.device)
    steps = wg.collect(device, chosen, args.db, args.repeats, args.max_time, args.rounds)
    done: set[str] = set()
    for n, step in enumerate(steps, 1):
        done.add(step.scenario.label)
        if args.json:
            print(json.dumps({"scenario": step.scenario.label, "measured": step.measured,
                              "outcomes": step.outcomes, "seconds": round(step.seconds, 1)}), flush=True)  # fmt: skip
        else:
            failed = {k: v for k, v in step.outcomes.items() if v and k != "ok"}
            console.print(
                f"[{n}/{len(chosen)}] {step.scenario.label}: {step.measured} sizes in {step.seconds:.0f} s {failed or ''}"
            )
    # --max-time stops before the scenarios left: say which, so the run can be resumed.
    skipped = [s.label for s in chosen if s.label not in done]
    if skipped and args.json:
        print(json.dumps({"skipped": skipped, "why": "--max-time"}), flush=True)
    elif skipped:
        console.print(f"--max-time reached: {len(skipped)} scenario(s) not measured "
                      "(run the same command again to resume)")  # fmt: skip
    return 0


def run_dataset(args: argparse.Namespace, console: Console) -> int:
    from perfport import wg
    from perfport.wg.assemble import UnknownDevicesError, assemble_dataset, keep_superseded

    if args.replace and not (args.merge and args.db):
        raise PerfportError("--replace needs --merge (the dataset) and --db (the re-measurement)")
    if args.superseded and not args.replace:
        raise PerfportError("--superseded names where --replace puts the old rows; add --replace")
    stores = args.db or ([] if args.merge else ["perfport.db"])
    for db in stores:  # the store's own message would send the user to 'perfport tune'
        if not Path(db).is_file():
            raise PerfportError(f"no results database at {db}; collect one with 'perfport wg "
                                f"collect --db {db}' or give an existing --db")  # fmt: skip
    inputs = [*(("--merge", m) for m in args.merge or []), *(("--db", d) for d in stores)]
    _check_written(args.out, "--out", inputs, writes_model=False)
    archived = None
    if args.superseded:
        _check_written(args.superseded, "--superseded", [*inputs, ("--out", args.out)],
                       writes_model=False)  # fmt: skip
        archived = wg.load_archive(args.superseded)  # a damaged one refused before any work
    try:
        built = assemble_dataset(args.merge or [], stores, args.drop_device or [], args.replace)
    except UnknownDevicesError as exc:
        raise PerfportError(
            f"--drop-device: no --merge scenario is on {', '.join(exc.unknown)}; "
            f"their devices: {', '.join(exc.known)}"
        ) from None
    kept = archived
    if args.superseded and built.superseded is not None and len(built.superseded):
        # Added to what the file holds, never written empty: a rerun replaces nothing.
        kept = keep_superseded(archived, built.superseded, args.superseded)
        wg.save_dataset(kept, args.superseded)
    data = built.data
    wg.save_dataset(data, args.out)
    for db in built.empty_stores:  # another store had campaigns: say which one had none
        _say(f"note: {db} holds no complete stencil campaign; skipped")
    for db, left in built.left_out:
        for out in left:
            _say(f"note: {db}: left out the campaigns of {out.kernel} ({out.why})")
    summary = {"out": args.out, "scenarios": len(data), "sizes": int(data.runtimes.shape[1]),
               "devices": sorted(set(data.device.tolist())), "measured": int(data.legal.sum()),
               "replaced": built.replaced, "duplicates": built.duplicates,
               "superseded_rows": (len(kept) if kept else 0) if args.superseded else None,
               "skipped_stores": list(built.empty_stores),
               "left_out": {db: sorted({o.kernel for o in left}) for db, left in built.left_out},
               "left_out_why": {db: {o.kernel: o.why for o in left} for db, left in built.left_out},
               "described_stencils": list(built.described),
               "described_scenarios": built.described_scenarios}  # fmt: skip
    if args.json:
        render.print_json(summary)
    else:
        dropped = (
            f"; {built.duplicates} duplicate scenario(s) kept once" if built.duplicates else ""
        )
        own = (
            f"; {built.described_scenarios} of described stencils ({', '.join(built.described)})"
            if built.described_scenarios
            else ""
        )
        console.print(
            f"wrote {summary['scenarios']} scenarios on {len(summary['devices'])} device(s) to "
            f"{args.out}"
            + (f" ({built.replaced} replaced)" if args.replace else "")
            + dropped
            + own
        )
    return 0


def run_train(args: argparse.Namespace, console: Console) -> int:
    from perfport import wg

    if args.method not in wg.METHODS:
        raise PerfportError(f"unknown method {args.method}; methods: {', '.join(wg.METHODS)}")
    from perfport.features import COMPILE_FREE_FEATURES

    path = wg_data_path(args.data)
    _check_written(args.out, "--out", [("--data", str(path))], writes_model=True)
    data = wg.load_dataset(path)
    if args.compile_free:
        data = data.with_features(COMPILE_FREE_FEATURES)
    model = wg.train(data, args.method)
    model.save(args.out)
    summary = {
        "out": args.out,
        "method": model.method,
        "scenarios": model.scenarios,
        "sizes": len(model.sizes),
        "features": len(model.feature_names),
    }
    if args.json:
        render.print_json(summary)
    else:
        console.print(f"trained {model.method} on {model.scenarios} scenarios; wrote {args.out}")
    return 0


def run_predict(args: argparse.Namespace, console: Console) -> int:
    from perfport import wg
    from perfport.devices import get_device
    from perfport.features import FeatureCache
    from perfport.tune import resolve_problem

    spec = _stencil(args.kernel)
    problem = resolve_problem(spec, problem_values(args.problem))
    device = get_device(args.device, spec.language)
    # A --db given by name must be there (a typo would silently avoid nothing); the default
    # may be missing: nothing refused yet.
    if args.db is not None and not Path(args.db).is_file():
        raise PerfportError(f"no results database at {args.db}; give an existing --db (or "
                            "none: perfport.db, where it exists)")  # fmt: skip
    wg.check_scenario(spec, problem, device)  # bad input is refused before a model is trained
    model = wg_model(args.model)
    refused = wg.refused_sizes(args.db or "perfport.db", spec, device)
    prediction = wg.predict_wg(
        model, spec, problem, device, refused, FeatureCache(_cache_dir() / "features")
    )
    if args.json:
        render.print_json(prediction.to_json())
    else:
        wc, wr = prediction.wg
        why = prediction.novelty
        novel = (
            "; novel: a kernel or device unlike those trained on"
            f" (p = {why.pvalue:.3f} < {why.alpha:g}; {why.device_scenarios} training scenarios"
            " share this device's features)"
            if prediction.novel and why is not None
            else ""
        )
        fallback = prediction.fallback
        instead = (
            f"; the model chose {fallback.model_wg[0]} x {fallback.model_wg[1]}: {fallback.message}"
            if fallback is not None
            else ""
        )
        console.print(
            f"{spec.name} on {device.id}: work-group {wc} x {wr} ({prediction.method}, {prediction.predict_ms:.1f} ms{novel}{instead})"
        )
    return 0


def _stencil(kernel: str) -> KernelSpec:
    """--kernel of 'wg predict': a built-in, a spec file, or a stencil described in JSON,
    whose errors name only what this command takes (not 'perfport space''s files)."""
    from perfport.kernels import BUILTINS, resolve_kernel
    from perfport.kernels.described import described_stencil_file

    if kernel not in BUILTINS and Path(kernel).suffix.lower() == ".json":
        return described_stencil_file(Path(kernel))
    return resolve_kernel(kernel)


def _check_written(
    path: str, option: str, inputs: Sequence[tuple[str, str]], *, writes_model: bool
) -> None:
    """Refuse, before anything is read, to write ``path`` over one of the command's inputs
    (``(flag, path)`` pairs) or over a perfport file of the other kind (a dataset written
    over a model, or a model over a dataset): either would be lost without a word."""
    from perfport.wg.dataset import is_dataset_file
    from perfport.wg.model import is_model_file

    check_output(path, option)  # a results database
    for flag, given in inputs:
        if _same_file(path, given):
            raise PerfportError(f"{option} {path} is also {flag}: writing it would replace what "
                                "this command reads; give another path")  # fmt: skip
    if not writes_model and is_model_file(path):
        raise PerfportError(f"{option} {path} is a trained work-group model; writing a dataset "
                            "there would destroy it; give another path")  # fmt: skip
    if writes_model and is_dataset_file(path):
        raise PerfportError(f"{option} {path} is a work-group dataset; writing a model there "
                            "would destroy it; give another path")  # fmt: skip


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one is missing: then only the same name is the same file
        return Path(a).resolve() == Path(b).resolve()


def wg_model(path: str | None) -> wg.WgModel:
    """The model a --model flag names, or the default one, cached where XDG says caches go."""
    from perfport import wg

    return wg.model_or_default(path, _cache_dir(), announce=_say)


def _cache_dir() -> Path:
    """Where XDG says caches go: the default model, and kernel features (features/)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfport"


def _say(message: str) -> None:
    print(f"perfport: {message}", file=sys.stderr, flush=True)
