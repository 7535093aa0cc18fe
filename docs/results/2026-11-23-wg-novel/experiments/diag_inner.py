"""Diagnostic: inside each outer training fold, 5-fold CV grouped by kernel instance (kernel
feature identity); per device, the realized log gain of the +fixed rule over the plain forest
(in %), with its standard error clustered by kernel instance. Seed 0 only (the seed also
draws the inner group split). Prints one line per outer fold.

    python docs/results/2026-11-23-wg-novel/experiments/diag_inner.py PARTITIONS

PARTITIONS: comma-separated, e.g. kernel,synthetic-real.
"""

import sys
from pathlib import Path

import numpy as np

from perfport.wg import folds
from perfport.wg.evaluate import _choose

sys.path.insert(0, str(Path(__file__).parent))
from common import SHORT, Multi, load


def groups_of(d):
    k = [i for i, n in enumerate(d.feature_names) if n.startswith("kernel_")]
    return np.unique(np.asarray(d.features)[:, k], axis=0, return_inverse=True)[1]


def inner_gains(d, seed, nfold=5, trees=100):
    g = groups_of(d)
    ug = np.random.default_rng(seed).permutation(np.unique(g))
    gain = np.full(len(d), np.nan)
    for part in np.array_split(ug, nfold):
        te = np.flatnonzero(np.isin(g, part))
        tr = np.flatnonzero(~np.isin(g, part))
        m = Multi(trees=trees, seed=seed).fit(d.subset(tr))
        for s in te:
            m.mode = ("plain",)
            a = _choose(m, d, s)[0]
            m.mode = ("fixed",)
            b = _choose(m, d, s)[0]
            gain[s] = np.log(d.runtimes[s, a] / d.runtimes[s, b])
    return gain, g


if __name__ == "__main__":
    data = load()
    for p in sys.argv[1].split(","):
        for fi, (train, test) in enumerate(folds(data, p, 0)):
            d = data.subset(train)
            gain, g = inner_gains(d, 0)
            out = []
            for dev in np.unique(d.device):
                r = d.device == dev
                x, gr = gain[r] * 100, g[r]
                # cluster-robust SE: the deviations from the mean summed per group
                ug = np.unique(gr)
                sums = np.array([x[gr == u].sum() for u in ug])
                counts = np.array([(gr == u).sum() for u in ug])
                n = len(x)
                se = np.sqrt(len(ug) / (len(ug) - 1) * ((sums - x.mean() * counts) ** 2).sum()) / n
                out.append(f"{SHORT[str(dev)]}: {x.mean():+.2f}±{se:.2f}")
            print(p, fi, data.kernel[test[0]], " | ".join(out), flush=True)
