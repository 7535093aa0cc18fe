"""Choice rules on one forest per fold (common.Multi): kernel and synthetic-real, seeds 0-2.

    python docs/results/2026-11-23-wg-novel/experiments/run_rules.py SET [SEEDS] [PARTITIONS]

SET: soft (rules.pkl, the shrinkage / LCB rules) or paired (paired.pkl); SEEDS and PARTITIONS
are comma-separated (default 0,1,2 and kernel,synthetic-real). Writes <SET file> in common.OUT
({(partition, seed): {mode: {scenario: column}}}, adding to what is there) and prints the
table for the seeds asked for.
"""

import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import OUT, choices, load, perf

SETS = {
    "soft": (
        "rules.pkl",
        [
            ("plain",),
            ("fixed",),
            ("ebm",),
            ("ebm", "clu"),
            ("ebp",),
            ("ebp", "clu"),
            ("lcb", 1.0),
            ("lcb", 2.0),
            ("lcb", 1.0, "clu"),
            ("lcb", 2.0, "clu"),
            ("kish", 1.0),
            ("kish", 3.0),
            ("kish", 10.0),
            ("kish", 30.0),
            ("kish", 1.0, "clu"),
            ("kish", 3.0, "clu"),
        ],
    ),
    "paired": ("paired.pkl", [("plain",), ("fixed",), ("plcb", 1.0), ("plcb", 2.0), ("majority",)]),
}
name, MODES = SETS[sys.argv[1]]
seeds = [int(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0, 1, 2]
parts = sys.argv[3].split(",") if len(sys.argv) > 3 else ["kernel", "synthetic-real"]
data = load()
path = OUT / name
store = pickle.loads(path.read_bytes()) if path.exists() else {}
for p in parts:
    for s in seeds:
        t = time.time()
        store[(p, s)] = choices(data, p, s, MODES)
        path.write_bytes(pickle.dumps(store))
        print(f"{p} seed {s}: {time.time() - t:.0f}s", flush=True)
for m in MODES:
    line = []
    for p in ["kernel", "synthetic-real"]:
        v = [perf(data, store[(p, s)][m]) for s in seeds if (p, s) in store]
        line.append(" / ".join(f"{x:.2f}" for x in v) + f" : {np.mean(v):.2f}" if v else "-")
    print(f"{m!s:22s} kernel {line[0]:30s} synth-real {line[1]}")
