"""Search strategies on real, brute-forced Kernel Tuner caches: perfport vs Kernel Tuner.

    pip install -e '.[pocl,bench]'
    python benchmarks/strategies.py [--seeds 30] [--budgets 20,50,100,200] [--data ../shared/data]
        [--runs FILE[,FILE...]]   # reuse runs (saved to the first file); the slow part
        [--summary-only]          # only summarise the stored runs; run nothing

Data: every Kernel Tuner cache under kerneltuner-benchmark_hub (GEMM on RTX 2080 Ti and 3090,
convolution on A100, A4000, MI250X and an older convolution space on RTX 3090). Both tools see
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

Run files are JSON, gzip-compressed when their name ends in .gz. The runs of
docs/results/2026-11-22-strategies.md are in benchmarks/results/strategies-runs.json.gz.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
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
from perfport.space import Space
from perfport.store import Store
from perfport.store.formats.imported import external_device
from perfport.store.formats.importing import import_file
from perfport.store.formats.search_space import load_space_file
from perfport.strategies import DEFAULT_STRATEGY, STRATEGIES, make_strategy
from perfport.tune.prior import Prior, transfer_prior
from perfport.tune.replay import ReplayData, evals_to, simulate

KT_STRATEGIES = ("random_sample", "genetic_algorithm", "bayes_opt", "dual_annealing", "diff_evo")
# Which T1 file's constraints generate each cache's space.
CONDITIONS = {
    "gemm": ("gemm_milo.json", 7),
    "convolution_milo": ("convolution_milo.json", None),
    "convolution": ("convolution.json", None),
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
    return ReplayData(f"{path.parent.name}/{path.name.split('.')[0]}", space, times)


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


def summarise(
    curves: dict[str, dict[str, np.ndarray]], budgets: list[int]
) -> dict[str, dict[str, Any]]:
    """curves[strategy][cache] = (seeds, budget) fractions -> mean fractions and evals-to."""
    out = {}
    top = max(budgets)
    for strategy, per_cache in curves.items():
        row: dict[str, Any] = {"fraction": {}, "evals_to_90": {}, "evals_to_95": {}}
        for b in budgets:
            row["fraction"][b] = float(np.mean([c[:, b - 1].mean() for c in per_cache.values()]))
        for cache, c in per_cache.items():
            for target, key in ((0.9, "evals_to_90"), (0.95, "evals_to_95")):
                row[key][cache] = float(np.median([evals_to(run[:top], target) for run in c]))
        out[strategy] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--budgets", default="20,50,100,200")
    parser.add_argument(
        "--strategies", default=",".join(s for s in STRATEGIES if s != "brute_force")
    )
    parser.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
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
        "--smoke", action="store_true", help="seconds: one cache, one seed, random search only"
    )
    args = parser.parse_args()
    if args.smoke:  # a check that the script still runs end to end, not a measurement
        args.seeds, args.budgets, args.strategies, args.caches = 2, "20", "random", "RTX_3090"
        args.runs, args.json = None, None
        has_kt = importlib.util.find_spec("kernel_tuner") is not None
        args.kt_strategies = "random_sample" if has_kt else ""
        if not has_kt:
            print("kernel_tuner not importable (pip install 'perfport[bench]'): skipped its part")
    budgets = [int(b) for b in args.budgets.split(",")]
    top = max(budgets)
    hub = args.data / "kerneltuner-benchmark_hub"
    paths = sorted(p for p in hub.glob("*/*.json.gz") if p.parent.name in CONDITIONS)
    files = [Path(f) for f in args.runs.split(",")] if args.runs else []
    runs: dict[str, list[float]] = {}
    for f in files:
        if f.exists():
            runs.update(read_runs(f))

    caches = {path: load_cache(path) for path in paths}
    datas = {path: replay_data(path, cache) for path, cache in caches.items()}
    names = args.strategies.split(",") if args.strategies else []
    # Importing every cache takes tens of seconds: only when a run will need the prior.
    needs_prior = not args.summary_only and any(STRATEGIES[n].takes_prior for n in names)
    prior = (
        priors(paths, {path: data.space for path, data in datas.items()})
        if needs_prior
        else dict.fromkeys(paths)
    )
    curves: dict[str, dict[str, np.ndarray]] = {}
    wanted = args.caches.split(",") if args.caches else [""]
    for path in paths:
        cache, data = caches[path], datas[path]
        if not any(w in data.label for w in wanted):
            continue
        t1, count = CONDITIONS[path.parent.name]
        conditions = list(load_space_file(hub / "t1_inputs" / t1).constraints[:count])
        found = prior[path]
        print(
            f"{data.label}: {len(data.space)} configurations, optimum {data.optimum:.4g} ms"
            + (f", prior from {found.sources} other devices" if found else ""),
            file=sys.stderr,
            flush=True,
        )
        scores = found.scores if found else None
        for name in names:
            started = time.perf_counter()
            make = partial(make_strategy, STRATEGIES[name], scores=scores)
            done = []
            for seed in range(args.seeds):
                key = f"perfport|{data.label}|{name}|{top}|{seed}"
                if not stored(runs, key, args.summary_only):
                    runs[key] = simulate(data, make, top, seed).tolist()
                done.append(fractions(data, np.array(runs[key]), top))
            curves.setdefault(f"perfport:{name}", {})[data.label] = np.array(done)
            print(
                f"  perfport {name:14} {time.perf_counter() - started:7.1f} s",
                file=sys.stderr,
                flush=True,
            )
        for name in args.kt_strategies.split(",") if args.kt_strategies else []:
            started = time.perf_counter()
            per_budget = []
            for budget in budgets:
                done = []
                for seed in range(args.seeds):
                    key = f"kernel_tuner|{data.label}|{name}|{budget}|{seed}"
                    if not stored(runs, key, args.summary_only):
                        runs[key] = run_kernel_tuner(path, cache, conditions, name, budget, seed)
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
            write_runs(files[0], runs)

    summary = summarise(curves, budgets)
    report(summary, budgets, top, f"perfport:{DEFAULT_STRATEGY}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))


def _fmt(v: float, top: int) -> str:
    return f">{top}" if not math.isfinite(v) else f"{v:.0f}"


def report(summary: dict[str, dict[str, Any]], budgets: list[int], top: int, default: str) -> None:
    caches = list(next(iter(summary.values()))["evals_to_95"])
    print("Mean fraction of the optimum reached (averaged over caches and seeds)")
    print(f"{'strategy':34}" + "".join(f"{'B=' + str(b):>9}" for b in budgets))
    for name, row in summary.items():
        print(f"{name:34}" + "".join(f"{row['fraction'][b]:9.3f}" for b in budgets))
    for key, label in (("evals_to_90", "90%"), ("evals_to_95", "95%")):
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
