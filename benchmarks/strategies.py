"""Search strategies on real, brute-forced Kernel Tuner caches: perfport vs Kernel Tuner.

    pip install -e '.[pocl,bench]'
    python benchmarks/strategies.py [--seeds 30] [--budgets 20,50,100,200] [--data ../shared/data]
        [--runs FILE[,FILE...]]   # reuse runs (saved to the first file); the slow part
        [--summary-only]          # only summarise the stored runs; run nothing

Data: every Kernel Tuner cache under kerneltuner-benchmark_hub (GEMM on RTX 2080 Ti and 3090,
convolution on A100, A4000, MI250X and an older convolution space on RTX 3090); ``--data`` may
name a copy holding more of the hub's caches (dedispersion and pnpoly besides: see
experiments/2026-11-27-heldout-caches/get_caches.py). Both tools see
the same objective, the cache's ``time`` (Kernel Tuner's mean of the repetitions), the same
legal space (the cache's configurations, which the T1 constraints reproduce exactly) and the
same failures. Kernel Tuner runs in its simulation mode with those constraints, once per budget
and seed (its strategies know the budget). perfport's strategies ignore the budget, so one run
of the largest budget per seed gives every smaller budget as a prefix. perfport's ``prior``
strategy gets what ``perfport tune`` would give it if the store held every cache: the other
devices' results of the same kernel (none for the older convolution space, which has no
sibling), so on each cache it sees only other GPUs' data.

Per strategy it prints the mean fraction of the optimum reached (optimum / best found, averaged
over caches and seeds) at each budget, and per cache the median number of evaluations to reach
90% and 95% of the optimum (over seeds, at the largest budget; '>B' when most runs never do).
The goal: perfport's default strategy needs at most half the evaluations of Kernel Tuner's best
strategy to reach 95%, averaged over the caches (a cache whose median run never reaches 95%
counts as the largest budget + 1).

Every target is reported at 90%, 95% and 99% of the optimum, and the aggregate score after
Kernel Tuner's methodology for comparing auto-tuning algorithms: at each budget b, how far a
strategy's mean best time has come from a random-search baseline (the exact expected best of b
configurations drawn without replacement) towards the optimum, (baseline - best) / (baseline -
optimum), averaged over b = 1..B and over the caches; 0 is random search, 1 the optimum at once.

    --jobs N          runs side by side in N processes (each single-threaded)
    --overhead N      also time each strategy's own ask + tell per evaluation over N
                      evaluations on the largest cache (no measurement: the search's cost alone)

Run files are JSON, gzip-compressed when their name ends in .gz. The runs of
docs/results/2026-11-22-strategies.md are in benchmarks/results/strategies-runs.json.gz.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Param
from perfport.cli.render import json_text
from perfport.space import Space
from perfport.store import Store
from perfport.store.formats.imported import external_device
from perfport.store.formats.importing import import_file
from perfport.store.formats.search_space import load_space_file
from perfport.strategies import DEFAULT_STRATEGY, STRATEGIES, make_strategy
from perfport.tune.prior import Prior, transfer_prior
from perfport.tune.replay import Objective, ReplayData, evals_to, simulate

TARGETS = ((0.9, "evals_to_90"), (0.95, "evals_to_95"), (0.99, "evals_to_99"))
KT_STRATEGIES = ("random_sample", "genetic_algorithm", "bayes_opt", "dual_annealing", "diff_evo")
# Which T1 file's constraints generate each cache's space.
CONDITIONS = {
    "gemm": ("gemm_milo.json", 7),
    "convolution_milo": ("convolution_milo.json", None),
    "convolution": ("convolution.json", None),
    "dedispersion_milo": ("dedispersion_milo.json", None),
    "pnpoly": ("pnpoly.json", None),
}


def load_cache(path: Path) -> dict[str, Any]:
    with gzip.open(path) as f:
        return json.load(f)


def read_runs(path: Path) -> dict[str, list[float]]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as f:
        return json.load(f)


def write_runs(path: Path, runs: dict[str, list[float]]) -> None:
    with gzip.open(path, "wt") if path.suffix == ".gz" else path.open("w") as f:
        json.dump(runs, f)


def load_runs(files: list[Path]) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Every stored run of ``files`` (a later file's run wins) and the first file's own: new
    runs are written to the first file with its own only, never with copies of the others."""
    runs: dict[str, list[float]] = {}
    own: dict[str, list[float]] = {}
    for n, f in enumerate(files):
        if f.exists():
            stored = read_runs(f)
            runs.update(stored)
            if n == 0:
                own = dict(stored)
    return runs, own


def stored(runs: dict[str, list[float]], key: str, summary_only: bool) -> bool:
    """Whether the run is stored; with --summary-only a missing run is an error."""
    if key not in runs and summary_only:
        sys.exit(f"no stored run {key!r} (--summary-only runs nothing)")
    return key in runs


def replay_data(path: Path, cache: dict[str, Any]) -> ReplayData:
    keys = cache["tune_params_keys"]
    params = [Param(k, tuple(cache["tune_params"][k])) for k in keys]
    entries = list(cache["cache"].values())
    space = Space.from_configs(params, [{k: e[k] for k in keys} for e in entries])
    times = np.full(len(space), np.nan)
    for e in entries:
        if not isinstance(e["time"], str):
            times[space.index({k: e[k] for k in keys})] = e["time"]
    label = f"{path.parent.name}/{path.name.split('.')[0]}"
    return ReplayData(label, space, times, objective=Objective.TIME)  # the cache's own "time"


def fractions(data: ReplayData, best_so_far: np.ndarray, budget: int) -> np.ndarray:
    f = np.where(np.isfinite(best_so_far), data.optimum / best_so_far, 0.0)
    last = f[-1] if len(f) else 0.0
    return np.concatenate([f, np.full(max(0, budget - len(f)), last)])[:budget]


def run_kernel_tuner(
    path: Path, cache: dict[str, Any], conditions: list[str], strategy: str, budget: int, seed: int
) -> list[float]:
    """Kernel Tuner in simulation mode; the best time after each distinct configuration."""
    import kernel_tuner

    plain = Path("/tmp") / f"perfport-bench-{path.parent.name}-{path.name.split('.')[0]}.json"
    if not plain.exists():
        plain.write_text(json.dumps(cache))
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_kernel(
            cache["kernel_name"], "__global__ void k() {}", cache["problem_size"], [], cache["tune_params"],
            restrictions=conditions, strategy=strategy, strategy_options={"max_fevals": budget},
            simulation_mode=True, cache=str(plain), verbose=False, quiet=True, lang="CUDA",
        )  # fmt: skip
    keys = cache["tune_params_keys"]
    seen, best, trace = set(), math.inf, []
    for r in results:
        key = tuple(r[k] for k in keys)
        if key in seen:
            continue  # Kernel Tuner counts a configuration once
        seen.add(key)
        if not isinstance(r["time"], str):
            best = min(best, r["time"])
        trace.append(best)
    return trace[:budget]


def priors(paths: list[Path], spaces: dict[Path, Space]) -> dict[Path, Prior | None]:
    """What ``perfport tune`` and ``replay`` would give the ``prior`` strategy on each cache's
    device: every cache imported into one store, and the prior built from the *other* devices'
    results of the same kernel and parameters (None where no other device has them)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "caches.db") as store:
        imported = {path: import_file(store, path) for path in paths}
        for path, got in imported.items():
            fingerprint = external_device(got.device).fingerprint
            out[path] = transfer_prior(store, got.kernel, spaces[path], fingerprint, got.problem)
    return out


# What forked worker processes read (set before the pool starts): replay data and prior
# scores by cache, so a task is only a few names.
_SHARED: dict[str, Any] = {}


def _perfport_run(task: tuple[Path, str, int, int]) -> list[float]:
    path, name, top, seed = task
    make = partial(make_strategy, STRATEGIES[name], scores=_SHARED["scores"][path])
    return simulate(_SHARED["datas"][path], make, top, seed).tolist()  # type: ignore[no-any-return]


def _overhead_run(task: tuple[Path, str, int]) -> tuple[float, float]:
    """A strategy's own cost, mean ms per evaluation (ask + tell; building it counted in) over
    the whole run and over its last 50 evaluations."""
    path, name, evaluations = task
    data = _SHARED["datas"][path]
    started = time.perf_counter()
    strategy = make_strategy(STRATEGIES[name], data.space, 0, _SHARED["scores"][path])
    steps = [time.perf_counter() - started]
    for _ in range(min(evaluations, len(data.space))):
        started = time.perf_counter()
        i = strategy.ask()
        if i is None:
            break
        t = data.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
        steps.append(time.perf_counter() - started)
    steps[1] += steps.pop(0)  # the build belongs to the first evaluation
    return 1e3 * float(np.mean(steps)), 1e3 * float(np.mean(steps[-50:]))


def _keyed(item: tuple[str, Any, Any]) -> tuple[str, Any]:
    key, worker, task = item
    return key, worker(task)


def run_tasks(worker: Any, tasks: dict[str, Any], jobs: int, save: Any = None) -> dict[str, Any]:
    """worker(task) for every task, in ``jobs`` forked processes when jobs > 1; ``save(done)``
    is called every 30 s with what is done so far, so a run cut short keeps its results."""
    done: dict[str, Any] = {}
    saved = time.perf_counter()
    items = [(key, worker, task) for key, task in tasks.items()]
    if jobs > 1 and len(tasks) > 1:
        os.environ["OMP_NUM_THREADS"] = "1"  # one core per process (torch, BLAS)
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 and len(tasks) > 1 else None
    try:
        for key, value in pool.imap_unordered(_keyed, items) if pool else map(_keyed, items):
            done[key] = value
            if save is not None and time.perf_counter() - saved > 30:
                save(done)
                saved = time.perf_counter()
    finally:
        if pool is not None:
            pool.terminate()
    return done


def random_baseline(times: np.ndarray, budget: int) -> np.ndarray:
    """The expected best time after b = 1..budget configurations drawn at random without
    replacement (a failure finds nothing; if every draw failed, the worst time counts)."""
    ok = np.sort(times[np.isfinite(times)])
    n, m = len(times), len(ok)
    k = np.arange(m + 1, dtype=np.float64)
    # log P(none of the k best among b draws) = sum_{j<b} log((n - k - j) / (n - j)), built up
    # one draw at a time.
    log_none = np.zeros(m + 1)
    out = np.empty(budget)
    with np.errstate(divide="ignore"):
        for b in range(1, budget + 1):
            log_none += np.log(np.maximum(n - k - (b - 1), 0.0) / (n - (b - 1)))
            none = np.exp(log_none)
            p_best = none[:-1] - none[1:]  # the best drawn is exactly the k-th best
            out[b - 1] = float(p_best @ ok + none[m] * ok[-1])
    return out


def aggregate_scores(
    curves: dict[str, dict[str, np.ndarray]], datas: dict[str, ReplayData], top: int
) -> dict[str, float]:
    """Kernel Tuner's methodology: per cache and budget b, (baseline - mean best) / (baseline -
    optimum) with random search as the baseline, averaged over b = 1..top and the caches."""
    baselines = {label: random_baseline(d.times, top) for label, d in datas.items()}
    out = {}
    for strategy, per_cache in curves.items():
        per = []
        for label, runs in per_cache.items():
            data, base = datas[label], baselines[label]
            worst = float(np.nanmax(data.times))
            best = np.where(runs > 0, data.optimum / np.maximum(runs, 1e-300), worst).mean(0)
            gap = np.maximum(base - data.optimum, 1e-300)
            per.append(float(np.mean((base - best[:top]) / gap)))
        out[strategy] = float(np.mean(per))
    return out


def summarise(
    curves: dict[str, dict[str, np.ndarray]], budgets: list[int]
) -> dict[str, dict[str, Any]]:
    """curves[strategy][cache] = (seeds, budget) fractions -> mean fractions and evals-to."""
    out = {}
    top = max(budgets)
    for strategy, per_cache in curves.items():
        row: dict[str, Any] = {
            "fraction": {},
            "evals_to_90": {},
            "evals_to_95": {},
            "evals_to_99": {},
        }
        for b in budgets:
            row["fraction"][b] = float(np.mean([c[:, b - 1].mean() for c in per_cache.values()]))
        for cache, c in per_cache.items():
            for target, key in TARGETS:
                row[key][cache] = float(np.median([evals_to(run[:top], target) for run in c]))
        out[strategy] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "data",
        help="the folder holding kerneltuner-benchmark_hub/",
    )
    parser.add_argument("--seeds", type=int, default=30, help="runs per strategy and cache")
    parser.add_argument("--budgets", default="20,50,100,200", help="evaluation budgets (commas)")
    parser.add_argument(
        "--strategies",
        help="perfport strategies (commas); default every registered one but brute_force, "
        "with --summary-only every one with runs in --runs",
    )
    parser.add_argument(
        "--kt-strategies", default=",".join(KT_STRATEGIES), help="Kernel Tuner's (commas)"
    )
    parser.add_argument(
        "--runs",
        help="comma-separated JSON files of runs to reuse; new runs are saved to the first",
    )
    parser.add_argument(
        "--summary-only",
        action="store_true",
        help="summarise the runs in --runs only: a missing run is an error and nothing is saved",
    )
    parser.add_argument("--json", type=Path, help="write the summary here")
    parser.add_argument("--caches", help="only caches whose label contains one of these (commas)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="seconds: one cache, one seed, random search only; writes no --json or --runs file",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs side by side in N processes")
    parser.add_argument(
        "--overhead", type=int, default=0, help="time each strategy over N evaluations too"
    )
    args = parser.parse_args()
    if args.smoke:  # a check that the script still runs end to end, not a measurement
        args.seeds, args.budgets, args.strategies, args.caches = 2, "20", "random", "RTX_3090"
        args.runs, args.json, args.overhead = None, None, 20
        has_kt = importlib.util.find_spec("kernel_tuner") is not None
        args.kt_strategies = "random_sample" if has_kt else ""
        if not has_kt:
            print("kernel_tuner not importable (pip install 'perfport[bench]'): skipped its part")
    budgets = [int(b) for b in args.budgets.split(",")]
    top = max(budgets)
    hub = args.data / "kerneltuner-benchmark_hub"
    paths = sorted(p for p in hub.glob("*/*.json.gz") if p.parent.name in CONDITIONS)
    files = [Path(f) for f in args.runs.split(",")] if args.runs else []
    runs, own = load_runs(files)
    caches = {path: load_cache(path) for path in paths}
    datas = {path: replay_data(path, cache) for path, cache in caches.items()}
    wanted = args.caches.split(",") if args.caches else [""]
    chosen = [path for path in paths if any(w in datas[path].label for w in wanted)]

    def complete(name: str) -> bool:  # a run stored for every cache and seed asked for
        return all(
            f"perfport|{datas[path].label}|{name}|{top}|{seed}" in runs
            for path in chosen
            for seed in range(args.seeds)
        )

    if args.strategies is None:  # every strategy; to summarise, every one with all its runs
        registered = [s for s in STRATEGIES if s != "brute_force"]
        args.strategies = ",".join(s for s in registered if not args.summary_only or complete(s))
    names = args.strategies.split(",") if args.strategies else []
    # Importing every cache takes tens of seconds: only when a run will need the prior.
    needs_prior = not args.summary_only and any(STRATEGIES[n].takes_prior for n in names)
    prior = (
        priors(paths, {path: data.space for path, data in datas.items()})
        if needs_prior
        else dict.fromkeys(paths)
    )
    _SHARED.update(
        datas=datas, scores={path: found.scores if found else None for path, found in prior.items()}
    )
    tasks = {
        f"perfport|{datas[path].label}|{name}|{top}|{seed}": (path, name, top, seed)
        for name in names
        for path in chosen
        for seed in range(args.seeds)
    }
    missing = {key: task for key, task in tasks.items() if not stored(runs, key, args.summary_only)}
    started = time.perf_counter()

    def save(done: dict[str, list[float]]) -> None:
        if files and not args.summary_only:
            write_runs(files[0], {**own, **done})

    made = run_tasks(_perfport_run, missing, args.jobs, save)
    runs.update(made)
    own.update(made)
    if missing:
        print(
            f"{len(missing)} perfport runs: {time.perf_counter() - started:.1f} s", file=sys.stderr
        )
    if files and not args.summary_only:
        write_runs(files[0], own)
    curves: dict[str, dict[str, np.ndarray]] = {}
    for path in chosen:
        cache, data = caches[path], datas[path]
        t1, count = CONDITIONS[path.parent.name]
        conditions = list(load_space_file(hub / "t1_inputs" / t1).constraints[:count])
        found = prior[path]
        print(
            f"{data.label}: {len(data.space)} configurations, optimum {data.optimum:.4g} ms"
            + (f", prior from {found.sources} other devices" if found else ""),
            file=sys.stderr,
            flush=True,
        )
        for name in names:
            done = [
                fractions(data, np.array(runs[f"perfport|{data.label}|{name}|{top}|{seed}"]), top)
                for seed in range(args.seeds)
            ]
            curves.setdefault(f"perfport:{name}", {})[data.label] = np.array(done)
        for name in args.kt_strategies.split(",") if args.kt_strategies else []:
            started = time.perf_counter()
            per_budget = []
            for budget in budgets:
                done = []
                for seed in range(args.seeds):
                    key = f"kernel_tuner|{data.label}|{name}|{budget}|{seed}"
                    if not stored(runs, key, args.summary_only):
                        runs[key] = own[key] = run_kernel_tuner(
                            path, cache, conditions, name, budget, seed
                        )
                    done.append(fractions(data, np.array(runs[key]), budget))
                per_budget.append(np.array(done))
            # Each budget's own runs give that budget's fraction; the largest budget's runs give
            # evaluations-to-target.
            combined = per_budget[-1].copy()
            for budget, budget_runs in zip(budgets, per_budget, strict=True):
                combined[:, budget - 1] = budget_runs[:, budget - 1]
            curves.setdefault(f"kernel_tuner:{name}", {})[data.label] = combined
            print(
                f"  kernel_tuner {name:18} {time.perf_counter() - started:7.1f} s",
                file=sys.stderr,
                flush=True,
            )
        if files and not args.summary_only:
            write_runs(files[0], own)

    summary = summarise(curves, budgets)
    scores = aggregate_scores(curves, {datas[p].label: datas[p] for p in chosen}, top)
    for name, row in summary.items():
        row["score"] = scores[name]
    report(summary, budgets, top, f"perfport:{DEFAULT_STRATEGY}")
    if args.overhead:
        summary["overhead"] = overhead(names, datas, args.overhead, args.jobs)
    if args.json:
        args.json.write_text(json_text(summary))


def overhead(
    names: list[str], datas: dict[Path, ReplayData], evaluations: int, jobs: int
) -> dict[str, dict[str, float]]:
    """Each strategy's own cost per evaluation on the largest cache, printed and returned."""
    path = max(datas, key=lambda p: len(datas[p].space))
    tasks = {name: (path, name, evaluations) for name in names}
    timed = run_tasks(_overhead_run, tasks, jobs)
    print(
        f"\nOverhead per evaluation (ask + tell, ms) over {evaluations} evaluations on "
        f"{datas[path].label} ({len(datas[path].space)} configurations; {jobs} processes)"
    )
    print(f"{'strategy':34}{'mean':>10}{'last 50':>10}")
    for name, (mean, last) in timed.items():
        print(f"{'perfport:' + name:34}{mean:10.2f}{last:10.2f}")
    return {name: {"mean_ms": mean, "last50_ms": last} for name, (mean, last) in timed.items()}


def _fmt(v: float, top: int) -> str:
    return f">{top}" if not math.isfinite(v) else f"{v:.0f}"


def report(summary: dict[str, dict[str, Any]], budgets: list[int], top: int, default: str) -> None:
    caches = list(next(iter(summary.values()))["evals_to_95"])
    print("Mean fraction of the optimum reached (averaged over caches and seeds)")
    print(f"{'strategy':34}" + "".join(f"{'B=' + str(b):>9}" for b in budgets))
    for name, row in summary.items():
        print(f"{name:34}" + "".join(f"{row['fraction'][b]:9.3f}" for b in budgets))
    for key, label in (("evals_to_90", "90%"), ("evals_to_95", "95%"), ("evals_to_99", "99%")):
        print(f"\nMedian evaluations to reach {label} of the optimum (over seeds; budget {top})")
        print(
            f"{'strategy':34}"
            + "".join(f"{c.split('/')[0][:11] + '/' + c.split('/')[1][:8]:>22}" for c in caches)
            + f"{'mean':>8}"
        )
        for name, row in summary.items():
            values = [row[key][c] for c in caches]
            mean = statistics.mean(values) if all(math.isfinite(v) for v in values) else math.inf
            print(
                f"{name:34}"
                + "".join(f"{_fmt(v, top):>22}" for v in values)
                + f"{_fmt(mean, top):>8}"
            )
    print(
        f"\nAggregate score after Kernel Tuner's methodology (0 random search, 1 optimum), B={top}"
    )
    for name, row in summary.items():
        print(f"{name:34}{row['score']:8.3f}")
    kt = {n: r for n, r in summary.items() if n.startswith("kernel_tuner:")}
    if not kt:
        print("\nratio to Kernel Tuner: skipped (no kernel_tuner runs)")
        return

    def mean95(row: dict[str, Any]) -> float:
        values = [row["evals_to_95"][c] for c in caches]
        return statistics.mean(min(v, top + 1) for v in values)  # unreached counts as top+1

    best_kt = min(kt, key=lambda n: mean95(kt[n]))
    theirs = mean95(kt[best_kt])
    print(
        f"\nMean of the medians to 95% over the caches, unreached counted as {top + 1}, "
        f"and the ratio to Kernel Tuner's best ({best_kt})"
    )
    print(f"{'strategy':34}{'unreached':>10}{'mean':>8}{'ratio':>8}")
    for name, row in summary.items():
        unreached = sum(not math.isfinite(row["evals_to_95"][c]) for c in caches)
        print(f"{name:34}{unreached:10d}{mean95(row):8.1f}{mean95(row) / theirs:8.2f}")
    if default in summary:
        ours = mean95(summary[default])
        unreached = sum(not math.isfinite(summary[default]["evals_to_95"][c]) for c in caches)
        print(
            f"\nGoal: {default} needs {ours:.1f} evaluations to reach 95% on average vs {theirs:.1f} for "
            f"Kernel Tuner's best ({best_kt}); ratio {ours / theirs:.2f} (target <= 0.5)"
            + (
                f"; {default} did not reach 95% within {top} on {unreached} cache(s), counted as {top + 1}"
                if unreached
                else ""
            )
        )


if __name__ == "__main__":
    main()
