"""One function per CLI command: parse nothing, call the API, print a table or JSON."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

import perfport
from perfport._core import PerfportError
from perfport.cli import parse_assignment, render
from perfport.cli.select_commands import (  # noqa: F401  (dispatched by name)
    cmd_select_evaluate,
    cmd_select_export,
    cmd_select_fit,
    cmd_select_portable,
    cmd_select_predict,
)
from perfport.devices import get_device
from perfport.kernels import BUILTINS, resolve_kernel
from perfport.measure import RunSettings, Timing
from perfport.store import CampaignStatus, Store, export_rows, write_csv, write_json
from perfport.store.formats.importing import import_file
from perfport.store.formats.kt_cache import to_kt_cache
from perfport.store.formats.search_space import is_space_file, load_space_file
from perfport.store.formats.t4 import to_t4
from perfport.strategies import DEFAULT_STRATEGY, STRATEGIES
from perfport.tune import Budget, resolve_problem
from perfport.tune.replay import replay_db


def cmd_devices(args: argparse.Namespace, console: Console) -> int:
    devices = perfport.devices()
    if args.json:
        render.print_json({"devices": [d.to_json() for d in devices]})
    else:
        render.devices_table(console, devices)
    return 0


def cmd_kernels(args: argparse.Namespace, console: Console) -> int:
    specs = [make() for make in BUILTINS.values()]
    if args.json:
        render.print_json({"kernels": [s.describe() for s in specs]})
    else:
        render.kernels_table(console, specs)
    return 0


def cmd_tune(args: argparse.Namespace, console: Console) -> int:
    timing = Timing.fixed(args.repeats) if args.repeats else Timing()
    settings = RunSettings(
        seed=args.seed, verify=not args.no_verify, timing=timing, timeout_s=args.timeout
    )
    result = perfport.tune(
        args.kernel,
        problem=dict(parse_assignment(p) for p in args.problem),
        device=args.device,
        strategy=args.strategy,
        budget=Budget(args.budget, args.max_time),
        db=args.db,
        campaign=args.campaign,
        settings=settings,
        progress=sys.stderr.isatty(),
        min_work_groups=args.min_work_groups,
        configs=_read_configs(args.configs) if args.configs else None,
        build_jobs=args.build_jobs,
    )
    if args.json:
        render.print_json(result.to_json())
    else:
        render.tune_report(console, result)
    return 130 if result.status is CampaignStatus.INTERRUPTED else 0


def _read_configs(path: str) -> list[dict[str, Any]]:
    """A JSON list of configurations, or an object holding one under 'configs'."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise PerfportError(f"--configs {path}: cannot be read ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PerfportError(f"--configs {path}: not JSON ({exc})") from None
    configs = data.get("configs") if isinstance(data, dict) else data
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise PerfportError(
            f"--configs {path}: give a list of parameter dicts, or an object with 'configs' "
            "such as 'perfport select portable --json' prints"
        )
    return configs


def cmd_sweep(args: argparse.Namespace, console: Console) -> int:
    from perfport.kernels import load_problems
    from perfport.tune import SWEEP_TIMING, sweep

    problems = load_problems(args.problems)[: args.first]
    settings = RunSettings(verify=not args.no_verify, timing=SWEEP_TIMING)
    steps = sweep(
        args.kernel, problems, device=args.device, db=args.db, settings=settings,
        max_seconds=args.max_time, rounds=args.rounds,
    )  # fmt: skip
    for n, step in enumerate(steps, 1):
        if args.json:
            print(json.dumps({"problem": dict(step.problem), "campaign": step.campaign,
                              "measured": step.measured, "outcomes": step.outcomes,
                              "best_ms": step.best_ms, "seconds": round(step.seconds, 2)}), flush=True)  # fmt: skip
        else:
            failed = {k: v for k, v in step.outcomes.items() if v and k != "ok"}
            best = f"{step.best_ms:.4g} ms" if step.best_ms is not None else "no result"
            console.print(
                f"[{n}/{len(problems)}] {step.problem.key}: {step.measured} measured, best {best} "
                f"({step.seconds:.1f} s) {failed or ''}"
            )
    return 0


def cmd_space(args: argparse.Namespace, console: Console) -> int:
    if is_space_file(args.kernel):  # a T1 or CAFF search-space file
        definition = load_space_file(args.kernel)
        device = get_device(args.device) if args.device else None
        name, problem, report = definition.name, {}, definition.space(device=device).report
    else:
        spec = resolve_kernel(args.kernel)
        problem = dict(resolve_problem(spec, dict(parse_assignment(p) for p in args.problem)))
        device = get_device(args.device, spec.language)
        space = perfport.kernel_space(spec, problem, device, args.min_work_groups)
        name, report = spec.name, space.report
    if args.json:
        render.print_json(
            {"kernel": name, "device": device and device.id, "problem": problem, **report.to_json()}
        )
    else:
        render.space_report(console, name, device, report)
    return 0


def cmd_strategies(args: argparse.Namespace, console: Console) -> int:
    rows = [
        {"name": n, "summary": s.summary, "default": n == DEFAULT_STRATEGY}
        for n, s in STRATEGIES.items()
    ]
    if args.json:
        render.print_json({"default": DEFAULT_STRATEGY, "strategies": rows})
    else:
        for r in rows:
            console.print(f"{r['name']:<12} {r['summary']}{'  (default)' if r['default'] else ''}")
    return 0


def cmd_replay(args: argparse.Namespace, console: Console) -> int:
    result = replay_db(
        args.db, args.kernel, args.device, args.strategy, args.budget, args.repeats, args.seed
    )
    if args.json:
        render.print_json(result.to_json())
    else:
        console.print(
            f"{result.strategy} on {result.data}: {result.repeats} runs of {result.budget} evaluations; "
            f"optimum {result.optimum_ms:.4g} ms"
        )
        if result.prior_sources:
            console.print(f"prior from {result.prior_sources} other device result sets in the db")
        console.print(f"mean fraction of the optimum reached: {result.mean_best_fraction:.3f}")
        for target, evals in result.evals_to.items():
            console.print(
                f"median evaluations to {target:.0%}: {evals if evals is not None else 'not reached'}"
            )
    return 0


def cmd_results(args: argparse.Namespace, console: Console) -> int:
    found = perfport.results(args.db, kernel=args.kernel, device=args.device)
    if args.json:
        render.print_json({"results": [r.to_json() for r in found]})
    else:
        render.results_table(console, found)
    return 0


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    with Store(args.db) as store:
        imported = import_file(store, args.file, args.device_name, args.kernel_name)
    if args.json:
        render.print_json(imported.to_json())
    else:
        console.print(
            f"imported {len(imported.measurements)} configurations ({imported.failed} failed) of "
            f"{imported.kernel} on {imported.device} from {args.file} into {args.db}"
        )
    return 0


def cmd_export(args: argparse.Namespace, console: Console) -> int:
    fmt = "json" if args.json else args.format
    with Store(args.db, create=False) as store:
        if fmt in ("kt-cache", "t4"):
            convert = to_kt_cache if fmt == "kt-cache" else to_t4
            document = convert(store, kernel=args.kernel, device=args.device)
            count = len(document.get("cache") or document.get("results") or [])

            def write(out: TextIO) -> int:
                json.dump(document, out)
                return count
        else:
            rows = export_rows(store, kernel=args.kernel, device=args.device)

            def write(out: TextIO) -> int:
                return (write_json if fmt == "json" else write_csv)(rows, out)

        if args.output:
            with open(args.output, "w", newline="") as out:
                n = write(out)
            print(f"wrote {n} results to {args.output}", file=sys.stderr)
        else:
            write(sys.stdout)
    return 0


def cmd_wg_collect(args: argparse.Namespace, console: Console) -> int:
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


def cmd_wg_dataset(args: argparse.Namespace, console: Console) -> int:
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


def cmd_wg_train(args: argparse.Namespace, console: Console) -> int:
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


def cmd_wg_predict(args: argparse.Namespace, console: Console) -> int:
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


def cmd_wg_evaluate(args: argparse.Namespace, console: Console) -> int:
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


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    from perfport.service.app import serve

    serve(_wg_model(args.model), args.db, args.host, args.port)
    return 0
