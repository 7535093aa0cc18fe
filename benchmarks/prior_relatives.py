"""The prior with relatives in the store (issue 27, item 3): median evaluations to 95% when the
same kernel's other devices are in the store, and when their best configurations fail or are
poor on the new device.

    python benchmarks/prior_relatives.py --seeds 10 --jobs 1 \\
        --runs benchmarks/results/prior-relatives-runs-2026-11-26.json.gz,benchmarks/results/strategies-runs.json.gz \\
        [--conditions relatives,failing,poor] [--summary-only] [--json OUT]
        [--smoke]   # seconds: the three newer convolutions, two seeds, budget 20

Each Kernel Tuner cache of ../shared/data with a relative (the same kernel and parameters on
another GPU: both GEMMs, the three newer convolutions) is replayed with the ``prior`` strategy,
budget 200, the cache's own ``time``, its prior built as ``perfport tune`` builds it from a
store holding every other cache (benchmarks/strategies.py's ``priors``). Conditions:

- ``relatives``: that prior as it is;
- ``failing``: the configurations the relatives rate in their best 1% fail on this device
  (compile or launch errors), as when another GPU's best tiles exceed this one's limits;
- ``poor``: the prior's order reversed, so its first picks are the configurations the
  relatives rated worst: a prior that misleads;
- ``cold``: no prior (``bayes_sweep``), for reference.

A condition may carry settings of the strategy, ``failing:give_up=10``. Runs are keyed
``relatives|cache|condition|seed``; ``relatives`` and ``cold`` read the stored ``prior`` and
``bayes_sweep`` runs of benchmarks/strategies.py when present and still valid (the prior's
fallback never triggers there; checked below). Kernel Tuner's stored runs give its best
strategy per cache.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

import strategies as protocol
from perfport.strategies import STRATEGIES, PriorGuided
from perfport.tune.replay import ReplayData, evals_to, simulate

BUDGET = 200  # --smoke lowers it
CONDITIONS = ("cold", "relatives", "failing", "poor")
_TASKS: dict[str, tuple[ReplayData, np.ndarray | None, dict[str, int]]] = {}  # for workers
_STRATEGY = {"name": "prior"}  # --strategy, read by the forked workers


def condition(
    name: str, data: ReplayData, scores: np.ndarray
) -> tuple[ReplayData, np.ndarray | None]:
    """The replay data and prior scores of one condition."""
    if name == "cold":
        return data, None
    if name == "poor":
        return data, np.nanmax(scores) - scores  # NaN (unknown to the prior) stays NaN
    if name == "failing":
        known = np.isfinite(scores)
        cut = np.quantile(scores[known], 0.99)
        times = np.where(known & (scores >= cut), np.nan, data.times)
        return replace(data, times=times), scores
    return data, scores


def parse(spec: str) -> tuple[str, dict[str, int]]:
    name, *settings = spec.split(":")
    if name not in CONDITIONS:
        sys.exit(f"no condition {name!r} in {spec!r}; choose from {', '.join(CONDITIONS)}")
    return name, {k: int(v) for k, _, v in (s.partition("=") for s in settings)}


def _run(task: tuple[str, int, int]) -> list[float]:
    key, seed, budget = task
    data, scores, settings = _TASKS[key]
    cls = STRATEGIES[_STRATEGY["name"]]
    return simulate(  # type: ignore[no-any-return]
        data,
        lambda space, s: cls(space, s, scores=scores, **settings),  # type: ignore[call-arg]
        budget,
        seed,
    ).tolist()


def fallback_triggers(data: ReplayData, scores: np.ndarray) -> bool:
    """Whether the prior's picks fail ``give_up`` times in a row on this cache (then the
    stored runs, made before the fallback, are not this strategy's)."""
    strategy = PriorGuided(data.space, 0, scores=scores)
    run = 0
    for i in strategy._ranking:
        run = run + 1 if np.isnan(data.times[i]) else 0
        if run >= strategy.give_up:
            return True
    return False


def to_95(runs: list[list[float]], optimum: float, top: int) -> np.ndarray:
    """Each run's evaluations to 95% of the optimum; ``top + 1`` where it never got there."""
    hits = []
    for trace in runs:
        t = np.array(trace)
        hits.append(min(evals_to(np.where(np.isfinite(t), optimum / t, 0.0), 0.95), top + 1))
    return np.array(hits)


def median_to_95(hits: np.ndarray, top: int, axis: int | None = None) -> np.ndarray:
    """The median of evaluations to 95% as benchmarks/strategies.py takes it: unreached where
    either middle run is (not the average of the two), then counted as ``top + 1``."""
    return np.minimum(np.median(np.where(hits > top, np.inf, hits), axis=axis), top + 1)


def _resampled_medians(hits: np.ndarray, rng: np.random.Generator, n: int, top: int) -> np.ndarray:
    return median_to_95(hits[rng.integers(len(hits), size=(n, len(hits)))], top, axis=1)


def intervals(
    rows: dict[str, dict[str, np.ndarray]], kt: dict[str, np.ndarray], labels: list[str], top: int
) -> None:
    """90% bootstrap intervals (seeds resampled within each cache, 2,000 times) of each row's
    ratio to Kernel Tuner's best: per cache (median over median) and of the means over the
    caches; and, for a row with a ``prior@`` twin, of the difference of the medians to it."""
    rng = np.random.default_rng(0)
    draws = 2000
    boot = {
        r: {c: _resampled_medians(v, rng, draws, top) for c, v in row.items()}
        for r, row in rows.items()
    }
    kt_boot = {c: _resampled_medians(v, rng, draws, top) for c, v in kt.items()}

    def span(x: np.ndarray, digits: int = 2) -> str:
        low, high = np.percentile(x, [5, 95])
        return f"{low:.{digits}f} to {high:.{digits}f}"

    print("\n90% intervals: ratio to Kernel Tuner's best per cache, and of the means")
    print(f"{'condition':30}" + "".join(f"{c[-16:]:>17}" for c in labels) + f"{'mean':>16}")
    for r in rows:
        cells = "".join(f"{span(boot[r][c] / kt_boot[c]):>17}" for c in labels)
        means = np.mean([boot[r][c] for c in labels], 0) / np.mean([kt_boot[c] for c in labels], 0)
        print(f"{r:30}{cells}{span(means):>16}")
    print("\n90% intervals: median evaluations minus prior's (negative: fewer)")
    for r in rows:
        if not r.startswith("prior@") and f"prior@{r.split(':')[0]}" in rows:
            twin = boot[f"prior@{r.split(':')[0]}"]
            diffs = [boot[r][c] - twin[c] for c in labels]
            cells = "".join(f"{span(d, 0):>17}" for d in diffs)
            print(f"{r:30}" + cells + f"{span(np.mean(diffs, 0), 1):>16}")


def stored_key(
    name: str, label: str, seed: int, settings: dict[str, int], budget: int, strategy_name: str
) -> str | None:
    if settings or budget != BUDGET or (strategy_name != "prior" and name != "cold"):
        return None
    strategy = {"cold": "bayes_sweep", "relatives": "prior"}.get(name)  # cold: prior, no scores
    return f"perfport|{label}|{strategy}|{budget}|{seed}" if strategy else None


def run_key(strategy: str, label: str, spec: str, seed: int) -> str:
    """A run's key; ``prior``'s keep the form of the runs stored before --strategy."""
    named = "" if strategy == "prior" or spec.startswith("cold") else f"{strategy}@"
    return f"relatives|{label}|{named}{spec}|{seed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--conditions", default="cold,relatives,failing,poor")
    parser.add_argument("--runs", help="run files; new runs go to the first")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument(
        "--available", action="store_true", help="with --summary-only: the seeds stored so far"
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--caches", help="only caches whose label contains one of these (commas)")
    parser.add_argument("--smoke", action="store_true", help="seconds: checks the script runs")
    parser.add_argument(
        "--strategy",
        default="prior",
        choices=[n for n, c in STRATEGIES.items() if issubclass(c, PriorGuided)],
        help="the prior strategy replayed (runs of another than prior are keyed by its name)",
    )
    args = parser.parse_args()
    _STRATEGY["name"] = args.strategy
    if args.smoke:  # a check that the script still runs end to end, not a measurement
        args.seeds, args.budget, args.caches, args.runs = 2, 20, "convolution_milo", None
        args.summary_only, args.json = False, None
    specs = args.conditions.split(",")
    for spec in specs:
        parse(spec)  # a typo fails before the slow part
    hub = args.data / "kerneltuner-benchmark_hub"
    wanted = args.caches.split(",") if args.caches else [""]
    every = sorted(p for p in hub.glob("*/*.json.gz") if p.parent.name in protocol.CONDITIONS)
    # The store holds every cache (the relatives); --caches picks the ones replayed.
    datas = {p: protocol.replay_data(p, protocol.load_cache(p)) for p in every}
    found = protocol.priors(every, {p: d.space for p, d in datas.items()})
    datas = {
        p: d for p, d in datas.items() if any(w in f"{p.parent.name}/{p.name}" for w in wanted)
    }
    files = [Path(f) for f in args.runs.split(",")] if args.runs else []
    runs: dict[str, list[float]] = {}
    for f in files:
        if f.exists():
            runs.update(protocol.read_runs(f))
    tasks: dict[str, tuple[str, int, int]] = {}
    labels = []
    for path, data in datas.items():
        prior = found[path]
        if prior is None:
            continue  # no relative in the store: nothing to measure here
        labels.append(data.label)
        valid = not fallback_triggers(data, prior.scores)
        print(f"{data.label}: prior from {prior.sources} other devices; stored runs "
              f"{'valid' if valid else 'stale (fallback triggers)'}", file=sys.stderr)  # fmt: skip
        for spec in specs:
            name, settings = parse(spec)
            cdata, scores = condition(name, data, prior.scores)
            _TASKS[f"{data.label}|{spec}"] = (cdata, scores, settings)
            for seed in range(args.seeds):
                key = run_key(args.strategy, data.label, spec, seed)
                old = stored_key(name, data.label, seed, settings, args.budget, args.strategy)
                if key not in runs and old in runs and (valid or name == "cold"):
                    runs[key] = runs[old]
                # the default's twin of the condition, which the report sets beside it
                twin = run_key("prior", data.label, name, seed)
                stored = stored_key(name, data.label, seed, {}, args.budget, "prior")
                if twin not in runs and stored in runs and (valid or name == "cold"):
                    runs[twin] = runs[stored]
                if key not in runs:
                    tasks[key] = (f"{data.label}|{spec}", seed, args.budget)
    if not labels:
        sys.exit(f"no cache with a relative matches --caches {args.caches!r}")
    # Seed by seed over every cache and condition, so a run cut short leaves whole seeds.
    tasks = dict(sorted(tasks.items(), key=lambda kv: kv[1][1]))
    if args.summary_only and args.available:
        tasks = {}  # report the seeds stored so far
    if tasks and args.summary_only:
        sys.exit(f"{len(tasks)} runs not stored, e.g. {next(iter(tasks))!r}")
    started = time.perf_counter()

    def save(done: dict[str, list[float]]) -> None:
        if files:
            mine = {k: v for k, v in {**runs, **done}.items() if k.startswith("relatives|")}
            protocol.write_runs(files[0], mine)

    runs.update(protocol.run_tasks(_run, tasks, args.jobs, save))
    if tasks:
        save({})
        print(f"{len(tasks)} runs: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    report(runs, specs, labels, {d.label: d for d in datas.values()}, args)


def report(
    runs: dict[str, list[float]],
    specs: list[str],
    labels: list[str],
    datas: dict[str, ReplayData],
    args: argparse.Namespace,
) -> None:
    top = args.budget
    seeds = range(args.seeds)
    hits: dict[str, dict[str, np.ndarray]] = {}  # row -> cache -> evaluations to 95% by seed
    names = [args.strategy] if args.strategy == "prior" else [args.strategy, "prior"]
    for strategy in names:
        for spec in specs:
            # prior's twin of a condition runs with prior's settings, not the candidate's
            ran = spec if strategy == args.strategy else spec.split(":")[0]
            row = spec if strategy == args.strategy else f"prior@{ran}"
            if row.startswith("prior@cold") or row in hits:
                continue  # the same runs as cold, or already read
            got = {
                label: [runs[k] for s in seeds if (k := run_key(strategy, label, ran, s)) in runs]
                for label in labels
            }
            if all(got.values()):
                hits[row] = {
                    c: to_95(r, _TASKS[f"{c}|{spec}"][0].optimum, top) for c, r in got.items()
                }
    kt = {
        n: {
            c: to_95(
                [runs[f"kernel_tuner|{c}|{n}|{top}|{s}"] for s in seeds], datas[c].optimum, top
            )
            for c in labels
        }
        for n in protocol.KT_STRATEGIES
        if all(f"kernel_tuner|{c}|{n}|{top}|{s}" in runs for c in labels for s in seeds)
    }

    def mean(row: dict[str, np.ndarray]) -> float:
        return statistics.mean(float(median_to_95(v, top)) for v in row.values())

    best = min(kt, key=lambda n: mean(kt[n])) if kt else None
    rows = dict(hits)
    if best:
        rows[f"kernel_tuner:{best}"] = kt[best]
    print(f"Median evaluations to 95% (budget {top}; unreached: >{top}, counted as {top + 1})")
    print(f"over the seeds run (n); ratio of the means to Kernel Tuner's best ({best})")
    print(
        f"{'condition':30}{'n':>4}"
        + "".join(f"{c[-16:]:>17}" for c in labels)
        + f"{'mean':>8}{'ratio':>7}"
    )
    for name, row in rows.items():
        medians = [float(median_to_95(v, top)) for v in row.values()]
        cells = "".join(f"{'>' + str(top) if m > top else f'{m:g}':>17}" for m in medians)
        ratio = mean(row) / mean(kt[best]) if best else float("nan")
        n = min(len(v) for v in row.values())
        print(f"{name:30}{n:4}{cells}{mean(row):8.1f}{ratio:7.2f}")
    if best:
        intervals(rows, kt[best], labels, top)
    if args.json:
        import json

        medians = {
            r: {c: float(median_to_95(v, top)) for c, v in row.items()} for r, row in rows.items()
        }
        args.json.write_text(json.dumps({"rows": medians, "kernel_tuner_best": best}, indent=1))


if __name__ == "__main__":
    main()
