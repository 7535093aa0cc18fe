"""How Optuna's GP sampler's cost per evaluation grows on the GEMM cache (17956 configurations):
prints the time of each block of 20 evaluations, so the seeds of the main run fit the time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import numpy as np

from perfport.strategies import STRATEGIES
from strategies import load_cache, replay_data

path = Path(sys.argv[1])
evaluations = int(sys.argv[2])
data = replay_data(path, load_cache(path))
strategy = STRATEGIES["optuna_gp"](data.space, 0)
started = time.perf_counter()
for n in range(1, evaluations + 1):
    i = strategy.ask()
    t = data.times[i]
    strategy.tell(i, None if np.isnan(t) else float(t))
    if n % 20 == 0:
        now = time.perf_counter()
        print(f"{n} evaluations: last 20 took {now - started:.1f} s", flush=True)
        started = now
