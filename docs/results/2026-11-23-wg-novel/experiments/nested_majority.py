"""Covered gate + a per-device switch plain -> majority rule for covered scenarios, decided by
nested leave-one-kernel-label-out inside each outer training fold (100 trees): a device gets
the majority rule where its inner mean log gain over plain is > 0 (rule A) or > 2 clustered SE
(rule B). Not covered (p < 0.05) -> +fixed rule (covered.Covered). Kernel partition only: in
synthetic-real every test scenario is not covered, so the switch never applies there and that
partition equals the +fixed rule's (95.12 / 95.36 / 95.08, rules.txt).

    python docs/results/2026-11-23-wg-novel/experiments/nested_majority.py
"""

import sys
import time
from pathlib import Path

import numpy as np

from perfport.wg import folds
from perfport.wg.evaluate import _choose

sys.path.insert(0, str(Path(__file__).parent))
from common import Multi, load, per_device, perf
from covered import Covered


def groups(d):
    k = [i for i, n in enumerate(d.feature_names) if n.startswith("kernel_")]
    return np.unique(np.asarray(d.features)[:, k], axis=0, return_inverse=True)[1]


data = load()
for seed in range(3):
    t0 = time.time()
    chosen = {"A": {}, "B": {}}
    for train, test in folds(data, "kernel", seed):
        d = data.subset(train)
        gain = {}
        g = groups(d)
        cols = None
        for lab in np.unique(d.kernel):
            tr, te = np.flatnonzero(d.kernel != lab), np.flatnonzero(d.kernel == lab)
            m = Multi(seed=seed).fit(d.subset(tr))
            cols = m.device_columns_
            for s in te:
                m.mode = ("plain",)
                a = _choose(m, d, s)[0]
                m.mode = ("majority",)
                b = _choose(m, d, s)[0]
                key = np.asarray(d.features[s, cols], dtype=np.float64).tobytes()
                gain.setdefault(key, []).append(
                    (g[s], np.log(d.runtimes[s, a] / d.runtimes[s, b]) * 100)
                )
        useA, useB = set(), set()
        for key, rows in gain.items():
            gr = np.array([r[0] for r in rows])
            x = np.array([r[1] for r in rows])
            ug, gi = np.unique(gr, return_inverse=True)
            sums = np.bincount(gi, weights=x - x.mean())
            se = np.sqrt(len(ug) / max(len(ug) - 1, 1) * (sums**2).sum()) / len(x)
            if x.mean() > 0:
                useA.add(key)
            if x.mean() > 2 * se:
                useB.add(key)
        cov = Covered(0.05, seed).fit(d)
        maj = Multi(seed=seed).fit(d)
        maj.mode = ("majority",)
        for s in test:
            key = np.asarray(data.features[s, cov.device_columns_], dtype=np.float64).tobytes()
            base = int(_choose(cov, data, s)[0])
            covered = cov.pvalue(data.features[s]) >= 0.05
            alt = int(_choose(maj, data, s)[0]) if covered else base
            chosen["A"][int(s)] = alt if (covered and key in useA) else base
            chosen["B"][int(s)] = alt if (covered and key in useB) else base
    for r in "AB":
        devices = " ".join(f"{k} {v[0]:.2f}" for k, v in per_device(data, chosen[r]).items())
        print(f"seed {seed} rule {r}: kernel {perf(data, chosen[r]):.2f}  " + devices, flush=True)
    print(f"  ({time.time() - t0:.0f}s)", flush=True)
