"""One function per CLI command: parse nothing, call the API, print a table or JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichBar

import perfport
from perfport import wg
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
from perfport.wg.assemble import UnknownDevicesError, assemble_dataset
from perfport.wg.scenarios import scenarios


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
    try:
        chosen = scenarios(args.scenarios, args.sizes, args.seed, args.max_border, args.real_world)
    except ValueError as exc:
        raise PerfportError(f"--scenarios: {exc}") from None
    device = get_device(args.device)
    steps = wg.collect(device, chosen, args.db, args.repeats, args.max_time, args.rounds)
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
    if args.replace and not (args.merge and args.db):
        raise PerfportError("--replace needs --merge (the dataset) and --db (the re-measurement)")
    if args.superseded and not args.replace:
        raise PerfportError("--superseded names where --replace puts the old rows; add --replace")
    stores = args.db or ([] if args.merge else ["perfport.db"])
    try:
        built = assemble_dataset(args.merge or [], stores, args.drop_device or [], args.replace)
    except UnknownDevicesError as exc:
        raise PerfportError(
            f"--drop-device: no --merge scenario is on {', '.join(exc.unknown)}; "
            f"their devices: {', '.join(exc.known)}"
        ) from None
    if args.superseded and built.superseded is not None:
        wg.save_dataset(built.superseded, args.superseded)
    data = built.data
    wg.save_dataset(data, args.out)
    summary = {"out": args.out, "scenarios": len(data), "sizes": int(data.runtimes.shape[1]),
               "devices": sorted(set(data.device.tolist())), "measured": int(data.legal.sum()),
               "replaced": built.replaced}  # fmt: skip
    if args.json:
        render.print_json(summary)
    else:
        console.print(
            f"wrote {summary['scenarios']} scenarios on {len(summary['devices'])} device(s) to "
            f"{args.out}" + (f" ({built.replaced} replaced)" if args.replace else "")
        )
    return 0


def cmd_wg_train(args: argparse.Namespace, console: Console) -> int:
    if args.method not in wg.METHODS:
        raise PerfportError(f"unknown method {args.method}; methods: {', '.join(wg.METHODS)}")
    model = wg.train(wg.load_dataset(_wg_data_path(args.data)), args.method)
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
    spec = resolve_kernel(args.kernel)
    problem = resolve_problem(spec, dict(parse_assignment(p) for p in args.problem))
    device = get_device(args.device, spec.language)
    wg.check_scenario(spec, problem, device)  # bad input is refused before a model is trained
    model = _wg_model(args.model)
    refused = wg.refused_sizes(args.db, spec, device)
    prediction = wg.predict_wg(model, spec, problem, device, refused)
    if args.json:
        render.print_json(prediction.to_json())
    else:
        wc, wr = prediction.wg
        novel = "; novel: a kernel or device unlike those trained on" if prediction.novel else ""
        console.print(
            f"{spec.name} on {device.id}: work-group {wc} x {wr} ({prediction.method}, {prediction.predict_ms:.1f} ms{novel})"
        )
    return 0


def _wg_data_path(name: str | None) -> Path:
    """The dataset a --data flag names; the environment may say where shared data lies."""
    return wg.dataset_path(name, os.environ.get("PERFPORT_SHARED_DATA"))


def _wg_model(path: str | None) -> wg.WgModel:
    """The model a --model flag names, or the default one, cached where XDG says caches go."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfport"
    return wg.model_or_default(path, cache, announce=_say)


def _say(message: str) -> None:
    print(f"perfport: {message}", file=sys.stderr, flush=True)


def _listed(
    text: str | None, known: Sequence[str], flag: str, default: Sequence[str] | None = None
) -> list[str]:
    """A comma-separated choice among ``known``, or ``all`` of them; without the flag,
    ``default`` (all of them where there is none)."""
    if text is None:
        return list(known if default is None else default)
    if text.strip() == "all":
        return list(known)
    wanted = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in known]
    if unknown or not wanted:
        what = f"unknown {', '.join(unknown)}" if unknown else "give at least one"
        raise PerfportError(f"{flag}: {what}; choose from all, {', '.join(known)}")
    return wanted


class _EvaluationProgress:
    """On stderr, never stdout (which --json keeps for the answer): a bar on a terminal,
    else a line as the folds reach each method on each partition."""

    def __init__(self) -> None:
        self._bar: RichBar | None = None
        self._task: Any = None
        self._last: tuple[str, str] | None = None

    def __enter__(self) -> _EvaluationProgress:
        stderr = Console(stderr=True)
        if stderr.is_terminal:
            self._bar = RichBar(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TimeRemainingColumn(), console=stderr, transient=True,
            )  # fmt: skip
            self._bar.start()
        return self

    def update(self, step: wg.EvalProgress) -> None:
        what = f"{step.method} on {step.partition}"
        if self._bar is not None:
            if self._task is None:
                self._task = self._bar.add_task(what, total=step.total)
            self._bar.update(self._task, completed=step.done, description=what)
        elif (step.partition, step.method) != self._last and step.done < step.total:
            print(f"perfport: [{step.done}/{step.total} folds] {what}", file=sys.stderr, flush=True)
        self._last = (step.partition, step.method)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def cmd_wg_evaluate(args: argparse.Namespace, console: Console) -> int:
    data = wg.load_dataset(_wg_data_path(args.data))
    methods = _listed(args.methods, wg.METHODS, "--methods", wg.DEFAULT_METHODS)
    partitions = _listed(args.partitions, wg.PARTITIONS, "--partitions")
    with _EvaluationProgress() as progress:
        results = wg.evaluate(data, methods, partitions, seed=args.seed, progress=progress.update)
    skipped = [p for p in partitions if p not in {r.partition for r in results}]
    why = ("a leave-one-out partition needs at least two devices, kernels or data sizes, and "
           "synthetic-real both synthetic and real-world kernels")  # fmt: skip
    if not results:
        raise PerfportError(f"no partition of {', '.join(partitions)} can be evaluated on this "
                            f"data: {why}")  # fmt: skip
    if skipped:
        print(f"perfport: skipped {', '.join(skipped)}: {why}", file=sys.stderr)
    if args.plots:
        from perfport.wg import plots  # matplotlib: only for --plots

        plots.save_figures(data, results, args.plots)
    if args.json:
        render.print_json({"results": [r.to_json(per_device=args.by_device) for r in results]})
    else:
        render.wg_table(console, results)
        if args.by_device:
            render.wg_device_table(console, results)
    return 0


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    from perfport.service.app import serve  # FastAPI: only for the daemon

    serve(_wg_model(args.model), args.db, args.host, args.port)
    return 0
