"""Where the cold default (bayes_rf) loses to Kernel Tuner's best strategy, per cache, from the
stored runs alone (no new runs): the start, the climb, and the plateaus.

    PYTHONPATH=src:benchmarks python experiments/2026-11-26-search-crossover/phases.py

For each cache: median evaluations to 95% of bayes_rf and of Kernel Tuner's best strategy on
that cache (30 seeds, budget 200); the median best fraction after the 8-point start and after
50 and 100 evaluations; over the runs that are below 95% at evaluation 50, the median longest
plateau below 95% (evaluations without a 0.1% gain) and how many parameters their incumbent at
evaluation 50 differs from the optimum in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import strategies as protocol
from perfport.tune.replay import ReplayData, evals_to

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT.parent / "shared" / "data" / "kerneltuner-benchmark_hub"
RUNS = ROOT / "benchmarks" / "results" / "strategies-runs.json.gz"
SEEDS, TOP = 30, 200


def best_fraction(data: ReplayData, trace: list[float]) -> np.ndarray:
    t = np.array(trace)
    return np.maximum.accumulate(np.where(np.isfinite(t), data.optimum / t, 0.0))


def longest_plateau(fraction: np.ndarray, start: int = 8) -> int:
    longest = run = 0
    for a, b in zip(fraction[start - 1 : -1], fraction[start:], strict=True):
        # Only while below 95%: a run that has reached it has no plateau to escape.
        run = run + 1 if b < a * 1.001 and b < 0.95 else 0
        longest = max(longest, run)
    return longest


def main() -> None:
    runs = protocol.read_runs(RUNS)
    kt = sorted({k.split("|")[2] for k in runs if k.startswith("kernel_tuner|")})
    print("cache | configs | bayes_rf | KT best | at 8 | at 50 | at 100 | stuck@50 | plateau | params off")
    for path in sorted(HUB.glob("*/*.json.gz")):
        if path.parent.name not in protocol.CONDITIONS:
            continue
        data = protocol.replay_data(path, protocol.load_cache(path))
        fr = [best_fraction(data, runs[f"perfport|{data.label}|bayes_rf|{TOP}|{s}"]) for s in range(SEEDS)]
        ours = np.median([evals_to(f, 0.95) for f in fr])
        theirs = min(
            np.median([evals_to(best_fraction(data, runs[f"kernel_tuner|{data.label}|{n}|{TOP}|{s}"]), 0.95) for s in range(SEEDS)])
            for n in kt
        )
        at = [float(np.median([f[i - 1] for f in fr])) for i in (8, 50, 100)]
        stuck = [s for s, f in enumerate(fr) if f[49] < 0.95]
        plateau = np.median([longest_plateau(fr[s]) for s in stuck]) if stuck else 0
        optimum = data.space.positions()[int(np.nanargmin(data.times))]
        off = []
        for s in stuck:
            t = np.array(runs[f"perfport|{data.label}|bayes_rf|{TOP}|{s}"][:50])
            # The incumbent at evaluation 50: the configuration whose time is the trace's minimum.
            best_time = np.nanmin(t)
            where = np.flatnonzero(np.isclose(data.times, best_time))
            off.append(int(np.count_nonzero(data.space.positions()[where[0]] != optimum)))
        print(
            f"{data.label} | {len(data.space)} | {ours:g} | {theirs:g} | "
            + " | ".join(f"{a:.2f}" for a in at)
            + f" | {len(stuck)}/{SEEDS} | {plateau:g} | {np.median(off) if off else 0:g}"
        )


if __name__ == "__main__":
    main()
