"""Nested leave-one-kernel-label-out inside each outer training fold, 100-tree forests.

Stores, per (partition, seed): for each outer fold, the outer test and training rows, the outer
choices of the plain forest and of the +fixed rule, per inner test scenario (device, kernel
instance, inner label, log gain of +fixed over plain), and each device's feature key. Decision
rules are applied afterwards (decide.py).

    python docs/results/2026-11-23-wg-novel/experiments/run_nested.py SEEDS PARTITIONS [TREES]

SEEDS and PARTITIONS are comma-separated (decide.py expects 0,1,2 and kernel,synthetic-real);
TREES is the inner forests' size (default 100; the outer forests always have 100). Writes
nested_t<TREES>.pkl in common.OUT, adding to what is there.
"""

import pickle
import sys
import time
from pathlib import Path

import numpy as np

from perfport.wg import folds
from perfport.wg.evaluate import _choose

sys.path.insert(0, str(Path(__file__).parent))
from common import OUT, Multi, load


def kernel_groups(d):
    k = [i for i, n in enumerate(d.feature_names) if n.startswith("kernel_")]
    return np.unique(np.asarray(d.features)[:, k], axis=0, return_inverse=True)[1]


def both(m, d, s):
    m.mode = ("plain",)
    a = _choose(m, d, s)[0]
    m.mode = ("fixed",)
    b = _choose(m, d, s)[0]
    return a, b


seeds = [int(s) for s in sys.argv[1].split(",")]
parts = sys.argv[2].split(",")
trees = int(sys.argv[3]) if len(sys.argv) > 3 else 100
data = load()
path = OUT / f"nested_t{trees}.pkl"
store = pickle.loads(path.read_bytes()) if path.exists() else {}
for p in parts:
    for seed in seeds:
        t0 = time.time()
        res = []
        for train, test in folds(data, p, seed):
            d = data.subset(train)
            outer = Multi(seed=seed).fit(d)
            oc = {int(s): both(outer, data, s) for s in test}
            g = kernel_groups(d)
            inner = []
            for lab in np.unique(d.kernel):
                tr = np.flatnonzero(d.kernel != lab)
                te = np.flatnonzero(d.kernel == lab)
                m = Multi(trees=trees, seed=seed).fit(d.subset(tr))
                for s in te:
                    a, b = both(m, d, s)
                    gain = float(np.log(d.runtimes[s, a] / d.runtimes[s, b]))
                    inner.append((str(d.device[s]), int(g[s]), str(lab), gain))
            devkeys = {
                str(dv): np.asarray(d.features[d.device == dv][0, outer.device_columns_]).tobytes()
                for dv in np.unique(d.device)
            }
            res.append(
                {"test": test, "train": train, "outer": oc, "inner": inner, "devkeys": devkeys}
            )
        store[(p, seed)] = res
        path.write_bytes(pickle.dumps(store))
        print(f"{p} seed {seed}: {time.time() - t0:.0f}s", flush=True)
