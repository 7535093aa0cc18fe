"""Tried and not kept: a size-aware boosted regressor with derived launch features.

    python docs/results/2026-11-24-wg-xeon-second-session/tried/size_aware.py \
        forest+novel,size_aware,size_aware_plain,blend0.5 kernel,synthetic-real 0

One row per (scenario, size): the scenario's features plus features of the launch (log sizes,
work-groups per compute unit, the wave remainder, the halo's share of the local tile, the
tile's local memory against the device's, how the size fills a sub-group, whether it divides
the data), fitted by scikit-learn's HistGradientBoostingRegressor to log(t_oracle / t_w).
``size_aware_plain`` has only the log sizes; ``blend0.5`` averages its prediction with the
default forest's vector. Seed 0, answered as ``perfport wg evaluate`` answers.
"""

import importlib
import sys
import time

import numpy as np

from perfport._core.optional import sklearn
from perfport.wg.dataset import load_dataset
from perfport.wg.predictors import WgPredictor
from perfport.wg.predictors.forest import WgPerformanceForest

# The module, not the function that perfport.wg exports under the same name.
ev = importlib.import_module("perfport.wg.evaluate")


def launch_features(names, x, sizes):
    """(n_sizes, k) derived features of each size for one scenario x."""
    f = dict(zip(names, x, strict=True))
    wc, wr = sizes[:, 0].astype(float), sizes[:, 1].astype(float)
    W, H = f["data_width"], f["data_height"]
    cu = max(f["device_compute_units"], 1.0)
    groups = np.ceil(W / wc) * np.ceil(H / wr)
    waves = np.ceil(groups / cu)
    halo = (wc + f["kernel_east"] + f["kernel_west"]) * (wr + f["kernel_north"] + f["kernel_south"])
    sub = f["device_subgroup"] if f["device_subgroup"] > 0 else 16.0
    pow2 = np.log2(wc.astype(int) & -wc.astype(int))
    return np.column_stack(
        [
            np.log2(wc),
            np.log2(wr),
            np.log2(wc * wr),
            np.log2(groups),
            np.log2(groups / cu),
            waves * cu / groups,
            np.log2(halo / (wc * wr)),
            np.log2(halo * f["data_in_bytes"]) - f["device_log2_local_mem"],
            np.log2(wc * wr) - f["device_log2_max_work_group"],
            np.ceil(wc / sub) * sub / wc,
            pow2,
            (W % wc != 0) + (H % wr != 0),
        ]
    )


class SizeAware(WgPredictor):
    def __init__(self, derived=True, iters=300, seed=0):
        self.derived, self.iters, self.seed = derived, iters, seed
        self.name = "size_aware"

    def rows(self, x, cols):
        base = np.repeat(x.reshape(1, -1), len(cols), 0)
        if self.derived:
            return np.column_stack([base, launch_features(self.names_, x, self.sizes_[cols])])
        return np.column_stack([base, np.log2(self.sizes_[cols])])

    def fit(self, data):
        self._store_sizes(data)
        self.names_ = data.feature_names
        X, Y = [], []
        best = np.nanmin(data.runtimes, axis=1)
        for s in range(len(data)):
            cols = np.flatnonzero(data.valid[s])
            y = np.log(best[s] / data.runtimes[s, cols])
            y = np.where(np.isfinite(y), y, np.nanmin(y) + np.log(0.5))
            X.append(self.rows(data.features[s], cols))
            Y.append(y)
        self.model_ = (
            sklearn("ensemble", "A tried predictor")
            .HistGradientBoostingRegressor(
                max_iter=self.iters, learning_rate=0.1, min_samples_leaf=40, random_state=self.seed
            )
            .fit(np.vstack(X), np.concatenate(Y))
        )
        return self

    def scores(self, x, cols):
        return self.model_.predict(self.rows(x, cols))

    def propose(self, x, max_wg, refused):
        c = self._candidates(max_wg, refused)
        return int(c[int(np.argmax(self.scores(x, c)))])


class Blend(WgPredictor):
    def __init__(self, weight=0.5, seed=0):
        self.weight, self.seed = weight, seed
        self.name = f"blend{weight}"

    def fit(self, data):
        self._store_sizes(data)
        self.f_ = WgPerformanceForest(fallback=True, novelty=0.05, seed=self.seed).fit(data)
        self.h_ = SizeAware(seed=self.seed).fit(data)
        return self

    def propose(self, x, max_wg, refused):
        c = self._candidates(max_wg, refused)
        p, _, _ = self.f_.predict_vector(x)
        a = p[c]
        a = np.where(np.isfinite(a), a, -5)
        b = self.h_.scores(x, c)
        return int(c[int(np.argmax((1 - self.weight) * a + self.weight * b))])


data = load_dataset("src/perfport/datasets/wg/stencils.npz")
makers = {
    "forest+novel": lambda s: WgPerformanceForest(fallback=True, novelty=0.05, seed=s),
    "size_aware": lambda s: SizeAware(seed=s),
    "size_aware_plain": lambda s: SizeAware(derived=False, seed=s),
    "blend0.5": lambda s: Blend(0.5, s),
}
which = sys.argv[1].split(",")
parts = sys.argv[2].split(",") if len(sys.argv) > 2 else ["kernel", "synthetic-real"]
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
oracle = data.oracle
for part in parts:
    splits = list(ev.folds(data, part, seed))
    for m in which:
        t0 = time.time()
        tests, chosen, first, times = [], [], [], []
        for tr, te in splits:
            p = makers[m](seed).fit(data.subset(tr))
            for s in te:
                a = time.perf_counter()
                w, props = ev._choose(p, data, s)
                times.append((time.perf_counter() - a) * 1e3)
                tests.append(s)
                chosen.append(w)
                first.append(props[0])
        r = ev._score(
            data,
            m,
            part,
            np.array(tests),
            np.array(chosen),
            np.array(first),
            times,
            oracle,
            0,
            None,
            seed,
        )
        dev = "  ".join(f"{d}: {p * 100:.2f}" for d, p, n in r.per_device)
        print(
            f"{part:15s} {m:18s} {r.performance * 100:.2f}  {dev}  ms={r.predict_ms:.2f} ({time.time() - t0:.0f}s)",
            flush=True,
        )
