"""Cold-start candidates, leave one cache out: settings chosen on the other caches, scored on
the held-out one.

    python benchmarks/cold_start.py --seeds 10 --jobs 2 --runs FILE[,FILE...] \\
        --candidates 'portfolio:patience=10,portfolio:patience=20,portfolio:patience=40'
        [--summary-only] [--per-cache] [--overhead 500] [--json OUT]

The protocol is benchmarks/strategies.py's (issue 27): each Kernel Tuner cache of
../shared/data replayed alone (cold: no other device's results, so the default ``prior`` runs
as ``bayes_sweep``), budget 200, each cache's own ``time``. A candidate is a registered strategy
with keyword settings, ``name:key=value:key=value``. For each held-out cache, the candidate
whose mean over the *other* caches of the median evaluations to 95% (unreached counted as
the budget + 1) is lowest is chosen, and its runs on the held-out cache are its score there. Nothing
about the held-out cache takes part in the choice.

Runs are stored under the keys of benchmarks/strategies.py (``perfport|cache|spec|200|seed``),
so the stored ``bayes_sweep`` (the default, cold), ``bayes_rf`` and Kernel Tuner runs of
benchmarks/results/strategies-runs.json.gz serve as baselines. ``--overhead N`` times each candidate's own ask + tell
over N evaluations on the largest cache.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import strategies as protocol
from perfport.cli.render import json_text
from perfport.strategies import STRATEGIES
from perfport.strategies.base import Strategy
from perfport.tune.replay import ReplayData, evals_to, simulate

BUDGET = 200
# What the default strategy, prior, runs as with nothing in the store: the baseline a candidate
# must beat (--baseline; until 2026-11-26's bayes_sweep it was bayes_rf, which the earlier
# pages' commands name).
DEFAULT = "bayes_sweep"
_DATAS: dict[str, ReplayData] = {}  # read by forked workers


def parse_spec(spec: str) -> tuple[str, dict[str, int | float]]:
    """'portfolio:patience=20:radius=1' -> ('portfolio', {'patience': 20, 'radius': 1})."""
    name, *settings = spec.split(":")
    if name not in STRATEGIES:
        sys.exit(f"no strategy {name!r} in {spec!r}; choose one of {', '.join(STRATEGIES)}")
    kwargs: dict[str, int | float] = {}
    for item in settings:
        key, _, value = item.partition("=")
        kwargs[key] = float(value) if "." in value else int(value)
    return name, kwargs


def build(spec: str, data: ReplayData, seed: int) -> Strategy:
    name, kwargs = parse_spec(spec)
    return STRATEGIES[name](data.space, seed, **kwargs)  # type: ignore[call-arg]


def _run(task: tuple[str, str, int, int]) -> list[float]:
    label, spec, top, seed = task
    data = _DATAS[label]
    return simulate(data, lambda _space, s: build(spec, data, s), top, seed).tolist()  # type: ignore[no-any-return]


def _overhead(task: tuple[str, str, int]) -> float:
    """Mean ms of the strategy's own ask + tell per evaluation, building it counted in."""
    label, spec, evaluations = task
    data = _DATAS[label]
    started = time.perf_counter()
    strategy = build(spec, data, 0)
    for _ in range(evaluations):
        i = strategy.ask()
        if i is None:
            break
        t = data.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
    return 1e3 * (time.perf_counter() - started) / evaluations


def medians(
    runs: dict[str, list[float]], spec: str, labels: list[str], seeds: int, prefix: str, top: int
) -> dict[str, float]:
    """Median evaluations to 95% per cache (inf: the median run never gets there)."""
    out = {}
    for label in labels:
        data = _DATAS[label]
        hits = []
        for seed in range(seeds):
            trace = np.array(runs[f"{prefix}|{label}|{spec}|{top}|{seed}"])
            fraction = np.where(np.isfinite(trace), data.optimum / trace, 0.0)
            hits.append(evals_to(fraction, 0.95))
        out[label] = float(np.median(hits))
    return out


def hits(
    runs: dict[str, list[float]], spec: str, label: str, seeds: int, prefix: str, top: int
) -> np.ndarray:
    """Evaluations to 95% of each seed's run on one cache (inf: never within the budget)."""
    data = _DATAS[label]
    out = []
    for seed in range(seeds):
        trace = np.array(runs[f"{prefix}|{label}|{spec}|{top}|{seed}"])
        out.append(evals_to(np.where(np.isfinite(trace), data.optimum / trace, 0.0), 0.95))
    return np.array(out)


def difference_interval(
    runs: dict[str, list[float]], spec: str, labels: list[str], seeds: int, top: int
) -> tuple[float, float, float]:
    """The candidate's mean over caches of median evaluations to 95% minus the default's
    (a median run that never gets there counted as top + 1), and its 90% bootstrap interval: seeds resampled with
    replacement per cache and strategy, 2,000 resamples, a fixed generator."""
    rng = np.random.default_rng(0)
    a = [hits(runs, spec, c, seeds, "perfport", top) for c in labels]
    b = [hits(runs, DEFAULT, c, seeds, "perfport", top) for c in labels]

    def score(per_cache: list[np.ndarray]) -> float:
        # As in the table: the median run's count, unreached (inf) counted as top + 1.
        return float(np.mean([min(float(np.median(x)), top + 1) for x in per_cache]))

    point = score(a) - score(b)
    draws = np.empty(2000)
    for k in range(len(draws)):
        draws[k] = score([x[rng.integers(len(x), size=len(x))] for x in a]) - score(
            [x[rng.integers(len(x), size=len(x))] for x in b]
        )
    low, high = np.quantile(draws, [0.05, 0.95])
    return point, float(low), float(high)


def per_cache(
    runs: dict[str, list[float]], specs: list[str], labels: list[str], seeds: int, top: int
) -> dict[str, dict[str, list[float]]]:
    """Each candidate minus the default on each cache alone, with the same bootstrap: a
    default must be no worse beyond noise on every cache, not only on the mean."""
    out: dict[str, dict[str, list[float]]] = {}
    print(f"\nCandidate minus {DEFAULT} per cache, median to 95% (90% bootstrap interval)")
    for spec in specs:
        out[spec] = {}
        for label in labels:
            point, low, high = difference_interval(runs, spec, [label], seeds, top)
            print(f"{spec:28}{label:28}{point:+8.1f}  ({low:+.1f} to {high:+.1f})")
            out[spec][label] = [point, low, high]
    return out


def censored_mean(values: list[float], top: int = BUDGET) -> float:
    return statistics.mean(min(v, top + 1) for v in values)


def leave_one_out(
    table: dict[str, dict[str, float]], labels: list[str], top: int = BUDGET
) -> dict[str, str]:
    """For each held-out cache, the candidate (not the default) best on the other caches."""
    pool = [spec for spec in table if spec != DEFAULT] or [DEFAULT]
    return {
        held: min(
            pool, key=lambda spec: censored_mean([table[spec][c] for c in labels if c != held], top)
        )
        for held in labels
    }


def _fmt(v: float, top: int) -> str:
    return f">{top}" if not math.isfinite(v) else f"{v:g}"


def report(
    table: dict[str, dict[str, float]],
    chosen: dict[str, str],
    kt: dict[str, dict[str, float]],
    labels: list[str],
    top: int,
) -> dict[str, Any]:
    loco = {c: table[chosen[c]][c] for c in labels}
    kt_best = min(kt, key=lambda n: censored_mean(list(kt[n].values()), top)) if kt else None
    rows = {f"perfport:{DEFAULT} (baseline)": table[DEFAULT], "leave-one-out candidate": loco}
    for spec in table:
        if spec != DEFAULT:
            rows[f"  {spec} (every cache)"] = table[spec]
    if kt_best:
        rows[f"kernel_tuner:{kt_best}"] = kt[kt_best]
        rows["kernel_tuner: best per cache"] = {c: min(kt[n][c] for n in kt) for c in labels}
    print(f"Median evaluations to 95% (budget {top}); mean with unreached counted as {top + 1}")
    print(f"{'':44}" + "".join(f"{c[-16:]:>17}" for c in labels) + f"{'mean':>8}")
    for name, row in rows.items():
        values = [row[c] for c in labels]
        print(
            f"{name:44}"
            + "".join(f"{_fmt(v, top):>17}" for v in values)
            + f"{censored_mean(values, top):8.1f}"
        )
    print("chosen per held-out cache: " + ", ".join(f"{c}: {chosen[c]}" for c in labels))
    return {"rows": rows, "chosen": chosen, "kernel_tuner_best": kt_best}


def main() -> None:
    global DEFAULT  # --baseline: read by the summaries below
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--candidates", default="portfolio", help="comma-separated specs")
    parser.add_argument("--runs", help="run files; new runs go to the first (default: none kept)")
    parser.add_argument("--caches", help="only caches whose label contains one of these (commas)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="seconds: two caches, two seeds, random search; writes no --json or --runs file",
    )
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--overhead", type=int, default=0)
    parser.add_argument("--per-cache", action="store_true", help="also each cache's difference")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline", default=DEFAULT, help=f"the default to beat ({DEFAULT})")
    args = parser.parse_args()
    DEFAULT = args.baseline
    if args.smoke:  # a check that the script still runs end to end, not a measurement
        args.seeds, args.candidates, args.runs, args.overhead = 2, "random", None, 20
        args.budget = 20
        args.caches, args.summary_only, args.json = "convolution/RTX,A4000", False, None
    hub = args.data / "kerneltuner-benchmark_hub"
    paths = sorted(p for p in hub.glob("*/*.json.gz") if p.parent.name in protocol.CONDITIONS)
    wanted = args.caches.split(",") if args.caches else [""]
    for path in paths:
        if any(w in f"{path.parent.name}/{path.name}" for w in wanted):
            data = protocol.replay_data(path, protocol.load_cache(path))
            _DATAS[data.label] = data
    labels = list(_DATAS)
    if len(labels) < 2:
        sys.exit(f"leaving one cache out needs two caches; {len(labels)} under {hub} match")
    files = [Path(f) for f in args.runs.split(",")] if args.runs else []
    runs, own = protocol.load_runs(files)
    specs = [DEFAULT, *(s for s in args.candidates.split(",") if s != DEFAULT)]
    for spec in specs:
        parse_spec(spec)  # a typo fails before any run
    tasks = {
        f"perfport|{label}|{spec}|{args.budget}|{seed}": (label, spec, args.budget, seed)
        for spec in specs
        for label in labels
        for seed in range(args.seeds)
    }
    # Seed by seed over every cache and candidate, so a run cut short leaves whole seeds.
    missing = dict(
        sorted(((k, t) for k, t in tasks.items() if k not in runs), key=lambda kt: kt[1][3])
    )
    if missing and args.summary_only:
        sys.exit(f"{len(missing)} runs not stored, e.g. {next(iter(missing))!r}")
    started = time.perf_counter()

    def save(done: dict[str, list[float]]) -> None:
        if files:
            protocol.write_runs(files[0], {**own, **done})

    made = protocol.run_tasks(_run, missing, args.jobs, save)
    runs.update(made)
    own.update(made)
    if missing:
        save({})
        print(f"{len(missing)} runs: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    top = args.budget
    table = {spec: medians(runs, spec, labels, args.seeds, "perfport", top) for spec in specs}
    kt_names = sorted(
        {k.split("|")[2] for k in runs if k.startswith("kernel_tuner|") and f"|{top}|" in k}
    )
    kt = {n: medians(runs, n, labels, args.seeds, "kernel_tuner", top) for n in kt_names}
    summary = report(table, leave_one_out(table, labels, top), kt, labels, top)
    print(f"\nCandidate minus {DEFAULT}, mean of the medians to 95% (90% bootstrap interval)")
    summary["difference"] = {}
    for spec in specs[1:]:
        point, low, high = difference_interval(runs, spec, labels, args.seeds, top)
        print(f"{spec:44}{point:+8.1f}  ({low:+.1f} to {high:+.1f})")
        summary["difference"][spec] = [point, low, high]
    if args.per_cache:
        summary["difference_per_cache"] = per_cache(runs, specs[1:], labels, args.seeds, top)
    if args.overhead:
        largest = max(labels, key=lambda c: len(_DATAS[c].space))
        costs = protocol.run_tasks(
            _overhead, {s: (largest, s, args.overhead) for s in specs}, args.jobs
        )
        print(f"\nOwn cost per evaluation over {args.overhead} on {largest} (ms, ask + tell)")
        for spec, ms in costs.items():
            print(f"{spec:44}{ms:10.2f}")
        summary["overhead_ms"] = costs
    if args.json:
        args.json.write_text(json_text(summary))


if __name__ == "__main__":
    main()
