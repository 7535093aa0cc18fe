"""Whether expected improvement underflows to zero on the candidates (then its argmax would be
an arbitrary candidate, and log EI would be the fix): counts, per ask of stuck cold runs, how
many candidates have a positive EI.

    python experiments/2026-11-26-cold-stalls/ei_positive.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "benchmarks")
import perfport.strategies.bayes as bayes
import strategies as protocol
from perfport.strategies import STRATEGIES

counts: list[int] = []
plain = bayes.expected_improvement


def counting(mean: np.ndarray, std: np.ndarray, best: float, xi: float = 0.01) -> np.ndarray:
    value = plain(mean, std, best, xi)
    counts.append(int((value > 0).sum()))
    return value


bayes.expected_improvement = counting  # the strategies look it up in the module at each ask
HUB = Path("../shared/data/kerneltuner-benchmark_hub")
# Seeds whose bayes_sweep run never reaches 95% within 200 (landscape.txt).
for cache, seed in [
    ("gemm/RTX_2080_Ti", 4),
    ("convolution_milo/A100", 3),
    ("convolution_milo/MI250X", 2),
]:
    path = HUB / f"{cache}.json.gz"
    data = protocol.replay_data(path, protocol.load_cache(path))
    for name in ["bayes_sweep", "bayes_opt"]:
        counts.clear()
        strategy = STRATEGIES[name](data.space, seed)
        for _ in range(200 if name == "bayes_sweep" else 120):
            i = strategy.ask()
            t = data.times[i]
            strategy.tell(i, None if np.isnan(t) else float(t))
        c = np.array(counts)
        print(
            f"{cache} {name} seed {seed}: {len(c)} EI asks, {int((c == 0).sum())} with no positive EI, "
            f"{int((c < 10).sum())} with fewer than 10; median {np.median(c):.0f} positive"
        )
