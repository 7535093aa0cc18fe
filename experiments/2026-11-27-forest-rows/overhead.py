"""The default cold strategy's own cost per evaluation over 500 evaluations, trees capped at
256 bootstrap rows (``bayes_sweep`` now) against every result in every tree
(``sweep_allrows``, before), interleaved in one process: mean, and mean over the last 50.

    python experiments/2026-11-27-forest-rows/overhead.py [--data DIR] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, "benchmarks")
sys.path.insert(0, str(Path(__file__).parent))
import run  # noqa: F401  (registers sweep_allrows)

import strategies as protocol
from perfport.strategies import STRATEGIES


def cost(data: protocol.ReplayData, name: str, evaluations: int) -> tuple[float, float]:
    started = time.perf_counter()
    strategy = STRATEGIES[name](data.space, 0)
    steps = [time.perf_counter() - started]
    for _ in range(evaluations):
        started = time.perf_counter()
        i = strategy.ask()
        assert i is not None
        t = data.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
        steps.append(time.perf_counter() - started)
    steps[1] += steps.pop(0)
    return 1e3 * float(np.mean(steps)), 1e3 * float(np.mean(steps[-50:]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--evaluations", type=int, default=500)
    args = parser.parse_args()
    path = args.data / "kerneltuner-benchmark_hub" / "gemm" / "RTX_2080_Ti.json.gz"
    data = protocol.replay_data(path, protocol.load_cache(path))
    names = ("bayes_sweep", "sweep_allrows")
    timed: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else names[::-1]:  # alternate who goes first
            timed[name].append(cost(data, name, args.evaluations))
            print(f"round {r} {name}: mean {timed[name][-1][0]:.2f} ms, last 50 "
                  f"{timed[name][-1][1]:.2f} ms", flush=True)  # fmt: skip
    print(f"\n{data.label} ({len(data.space)} configurations), {args.evaluations} evaluations, "
          f"median of {args.rounds} rounds (ms per evaluation, ask + tell)")  # fmt: skip
    medians = {n: [statistics.median(t[k] for t in timed[n]) for k in (0, 1)] for n in names}
    for name in names:
        print(f"{name:16} mean {medians[name][0]:8.2f}   last 50 {medians[name][1]:8.2f}")
    new, old = medians["bayes_sweep"], medians["sweep_allrows"]
    print(f"ratio capped / all rows: mean {new[0] / old[0]:.2f}, last 50 {new[1] / old[1]:.2f}")


if __name__ == "__main__":
    main()
