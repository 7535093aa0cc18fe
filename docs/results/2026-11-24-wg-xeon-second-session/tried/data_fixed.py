"""Tried and not kept: +novel's fallback size keyed on the device and the data size and type.

    python docs/results/2026-11-24-wg-xeon-second-session/tried/data_fixed.py 1 novel

The novel-scenario fallback of ``performance_forest+novel`` takes the device's best fixed size;
here it takes the best fixed size of the device at the scenario's data size and types, where
training has at least MIN (first argument) such scenarios, else the device's. Seeds 0-2.
"""

import importlib
import sys

import numpy as np

from perfport.wg.dataset import load_dataset
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.vectors import best_fixed as _best_fixed

ev = importlib.import_module("perfport.wg.evaluate")


class DataFixed(WgPerformanceForest):
    def _fit_vectors(self, data):
        super()._fit_vectors(data)
        cols = [i for i, n in enumerate(data.feature_names) if n.startswith(("device_", "data_"))]
        self.dd_cols_ = np.array(cols)
        x = np.asarray(data.features, dtype=np.float64)
        keys = [x[i, self.dd_cols_].tobytes() for i in range(len(data))]
        self.dd_fixed_ = {}
        for key in set(keys):
            rows = np.array([k == key for k in keys])
            if rows.sum() >= MIN:
                self.dd_fixed_[key] = _best_fixed(self.vectors_, rows)

    def _fixed_for(self, x):
        key = np.asarray(x, dtype=np.float64)[self.dd_cols_].tobytes()
        if key in self.dd_fixed_:
            return self.dd_fixed_[key]
        return super()._fixed_for(x)


MIN = int(sys.argv[1])
novelty = None if sys.argv[2] == "fixed" else 0.05
data = load_dataset("src/perfport/datasets/wg/stencils.npz")
for part in ("kernel", "synthetic-real"):
    out = []
    for seed in (0, 1, 2):
        r = {}
        for tr, te in ev.folds(data, part, seed):
            p = DataFixed(fallback=True, novelty=novelty, seed=seed).fit(data.subset(tr))
            for s in te:
                w, _ = ev._choose(p, data, s)
                r[s] = np.nanmin(data.runtimes[s]) / data.runtimes[s, w]
        S = np.array(sorted(r))
        v = np.array([r[s] for s in S])
        out.append(100 * np.exp(np.log(v).mean()))
        dev = {
            str(d): round(float(100 * np.exp(np.log(v[data.device[S] == d]).mean())), 2)
            for d in np.unique(data.device)
        }
        print(part, seed, round(out[-1], 2), dev, flush=True)
    print(part, "mean", round(np.mean(out), 2), flush=True)
