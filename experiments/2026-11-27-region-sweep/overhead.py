"""The default's own cost per evaluation with relatives in the store, over 500 evaluations on
gemm/RTX_2080_Ti (17,956 configurations; its prior from gemm/RTX_3090, as benchmarks/
strategies.py builds it): ``prior`` keeping to its region against ``region=0`` (the default
before), interleaved in one process: mean, and mean over the last 50.

    python experiments/2026-11-27-region-sweep/overhead.py [--data DIR] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, "benchmarks")
import strategies as protocol
from perfport.strategies import PriorGuided


def cost(
    data: protocol.ReplayData, scores: np.ndarray, region: float, n: int
) -> tuple[float, float]:
    started = time.perf_counter()
    strategy = PriorGuided(data.space, 0, scores=scores, region=region)
    steps = [time.perf_counter() - started]
    for _ in range(n):
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
    hub = args.data / "kerneltuner-benchmark_hub" / "gemm"
    paths = [hub / "RTX_2080_Ti.json.gz", hub / "RTX_3090.json.gz"]
    datas = {p: protocol.replay_data(p, protocol.load_cache(p)) for p in paths}
    prior = protocol.priors(paths, {p: d.space for p, d in datas.items()})[paths[0]]
    assert prior is not None
    data = datas[paths[0]]
    regions = {"prior (region 0.15)": 0.15, "prior, region=0": 0.0}
    timed: dict[str, list[tuple[float, float]]] = {n: [] for n in regions}
    for r in range(args.rounds):
        for name in list(regions) if r % 2 == 0 else list(regions)[::-1]:
            timed[name].append(cost(data, prior.scores, regions[name], args.evaluations))
            print(f"round {r} {name}: mean {timed[name][-1][0]:.2f} ms, last 50 "
                  f"{timed[name][-1][1]:.2f} ms", flush=True)  # fmt: skip
    print(f"\n{data.label} ({len(data.space)} configurations), {args.evaluations} evaluations, "
          f"median of {args.rounds} rounds (ms per evaluation, ask + tell)")  # fmt: skip
    for name in regions:
        mean, last = (statistics.median(t[k] for t in timed[name]) for k in (0, 1))
        print(f"{name:22} mean {mean:8.2f}   last 50 {last:8.2f}")


if __name__ == "__main__":
    main()
