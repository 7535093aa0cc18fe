"""Where cold bayes_sweep runs stall: per cache, the density of good configurations, and for
each seed the evaluations to 95% and the incumbent's distance (parameters differing) to the
nearest configuration within 5% of the optimum.

    python experiments/2026-11-26-cold-stalls/landscape.py [CACHE-SUBSTRING]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "benchmarks")
import strategies as protocol
from perfport.strategies import STRATEGIES

HUB = Path("../shared/data/kerneltuner-benchmark_hub")
runs = protocol.read_runs(Path("benchmarks/results/strategies-runs.json.gz"))
want = sys.argv[1] if len(sys.argv) > 1 else ""
for path in sorted(p for p in HUB.glob("*/*.json.gz") if p.parent.name in protocol.CONDITIONS):
    data = protocol.replay_data(path, protocol.load_cache(path))
    if want not in data.label:
        continue
    t = data.times
    ok = np.isfinite(t)
    good = ok & (t <= data.optimum / 0.95)
    pos = np.array(
        [
            [p.values.index(c[p.name]) for p in data.space.params]
            for c in (data.space.config(i) for i in range(len(t)))
        ]
    )
    print(
        f"\n{data.label}: {len(t)} legal, {ok.sum()} run, {good.sum()} within 95% "
        f"(random search needs ~{len(t) / max(good.sum(), 1):.0f})"
    )
    print("  params:", ", ".join(f"{p.name}({len(p.values)})" for p in data.space.params))
    print("  good configs:", [data.space.config(i) for i in np.flatnonzero(good)][:6])
    for seed in range(10):
        key = f"perfport|{data.label}|bayes_sweep|200|{seed}"
        best = np.array(runs[key])
        frac = data.optimum / best
        reach = int(np.argmax(frac >= 0.95)) + 1 if (frac >= 0.95).any() else None
        # Re-simulate to learn the incumbent at evaluation 100.
        s = STRATEGIES["bayes_sweep"](data.space, seed)
        for _ in range(100):
            i = s.ask()
            v = t[i]
            s.tell(i, None if np.isnan(v) else float(v))
        inc = s.best[0]
        dist = (pos[good] != pos[inc]).sum(axis=1).min()
        print(
            f"  seed {seed}: to95={reach}, frac@50={frac[49]:.2f} @100={frac[99]:.2f} @200={frac[-1]:.2f}; "
            f"incumbent@100 {frac[99]:.2f} is {dist} params from a good one: {data.space.config(inc)}"
        )
