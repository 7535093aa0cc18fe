"""Basins of attraction of steepest-descent one-parameter hill climbing on each cache: the share
of configurations whose climb ends within 5% of the optimum, and the mean evaluations a climb
costs (every untold neighbour of each visited centre measured).

    python experiments/2026-11-26-cold-stalls/basins.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "benchmarks")
import strategies as protocol
from perfport.strategies.geometry import Geometry

HUB = Path("../shared/data/kerneltuner-benchmark_hub")
rng = np.random.default_rng(0)
for path in sorted(p for p in HUB.glob("*/*.json.gz") if p.parent.name in protocol.CONDITIONS):
    data = protocol.replay_data(path, protocol.load_cache(path))
    t = np.where(np.isfinite(data.times), data.times, np.inf)
    geometry = Geometry(data.space)
    nb: dict[int, list[int]] = {}  # neighbours, computed once per configuration

    ends, costs = [], []
    for start in rng.choice(len(t), 300, replace=False):
        if not np.isfinite(t[start]):
            continue
        c, seen = int(start), {int(start)}
        while True:
            if c not in nb:
                nb[c] = geometry.exchanges(c)
            n = nb[c]
            seen.update(n)
            b = min(n, key=lambda j: t[j])
            if t[b] < t[c]:
                c = b
            else:
                break
        ends.append(data.optimum / t[c])
        costs.append(len(seen))
    ends = np.array(ends)
    print(
        f"{data.label}: {np.mean(ends >= 0.95):.2f} of climbs end >=95%, {np.mean(ends >= 0.9):.2f} >=90%; "
        f"median end {np.median(ends):.2f}; evaluations per climb median {np.median(costs):.0f}"
    )
