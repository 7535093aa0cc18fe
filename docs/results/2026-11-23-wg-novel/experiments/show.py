"""Per-device table of a run_rules.py store: for every mode, the mean over seeds 0-2 of each
device's performance, and of the whole partition's.

    python docs/results/2026-11-23-wg-novel/experiments/show.py STORE PARTITION

STORE: a pickle path, or a file name in common.OUT (rules.pkl, paired.pkl); it must hold
seeds 0-2 of PARTITION (kernel or synthetic-real).
"""

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import OUT, load, per_device, perf

data = load()
path = Path(sys.argv[1])
if not path.exists():
    path = OUT / path
store = pickle.loads(path.read_bytes())
p = sys.argv[2]
seeds = [0, 1, 2]
modes = list(store[(p, 0)].keys())
devs = None
for m in modes:
    agg = {}
    for s in seeds:
        for d, (v, _n) in per_device(data, store[(p, s)][m]).items():
            agg.setdefault(d, []).append(v)
    if devs is None:
        devs = list(agg)
        print(f"{'mode':24s}" + "".join(f"{d:>13s}" for d in devs) + "      all")
    overall = np.mean([perf(data, store[(p, s)][m]) for s in seeds])
    print(f"{m!s:24s}" + "".join(f"{np.mean(agg[d]):13.2f}" for d in devs) + f"{overall:9.2f}")
