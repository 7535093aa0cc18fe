"""The shipped performance_forest+novel, WgPerformanceForest(fallback=True, novelty=alpha),
for alpha 0.01, 0.02, 0.05 and 0.1 on the kernel and synthetic-real partitions, seeds 0-2.

Performance: the geometric mean over the test scenarios of t_oracle / t_chosen (t_oracle the
fastest size measured for the scenario), in %. One line per alpha and partition: the three
seeds and their mean.

    python docs/results/2026-11-23-wg-novel/experiments/alpha_sweep.py
"""

from pathlib import Path

import numpy as np

from perfport.wg import folds, load_dataset
from perfport.wg.evaluate import _choose
from perfport.wg.predictors.forest import WgPerformanceForest

DATA = Path(__file__).parents[4] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"


def score(data, partition, alpha, seed):
    oracle = np.nanmin(data.runtimes, axis=1)
    ratios = []
    for train, test in folds(data, partition, seed):
        model = WgPerformanceForest(fallback=True, novelty=alpha, seed=seed)
        model.fit(data.subset(train))
        for s in test:
            ratios.append(oracle[s] / data.runtimes[s, int(_choose(model, data, s)[0])])
    return float(np.exp(np.mean(np.log(ratios))) * 100)


data = load_dataset(DATA)
for alpha in [0.01, 0.02, 0.05, 0.1]:
    for partition in ["kernel", "synthetic-real"]:
        values = [score(data, partition, alpha, seed) for seed in range(3)]
        seeds = " / ".join(f"{v:.2f}" for v in values)
        print(f"alpha {alpha} {partition}: {seeds}, mean {np.mean(values):.2f}", flush=True)
