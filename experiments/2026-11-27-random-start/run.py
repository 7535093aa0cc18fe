"""The cold default (bayes_sweep) with its first evaluations drawn at random from the legal
configurations instead of by maximin (each the farthest of 256 random ones from everything
measured). Maximin puts a start on the space's boundary, the extreme values of every parameter;
on the held-out caches (docs/results/2026-11-27-heldout-caches.md) the cold default was slower
than random search where most configurations are good, which the boundary's slow extremes
would explain. Scored with benchmarks/cold_start.py's protocol; registered here only.

    python experiments/2026-11-27-random-start/run.py --seeds 30 --jobs 2 --per-cache \
        --candidates 'sweep_rs,sweep_rs:initial=4' \
        --runs experiments/2026-11-27-random-start/runs.json.gz,benchmarks/results/strategies-runs.json.gz
"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import cold_start
from perfport.space import Space
from perfport.strategies import STRATEGIES
from perfport.strategies.sweep import SweepBayes


class RandomStartSweep(SweepBayes):
    name = "sweep_rs"

    def __init__(self, space: Space, seed: int = 0, initial: int = 8) -> None:
        super().__init__(space, seed)
        self.initial = initial

    def _spread(self, untold: np.ndarray) -> int:
        return int(self.rng.choice(untold))


STRATEGIES["sweep_rs"] = RandomStartSweep  # type: ignore[assignment]

if __name__ == "__main__":
    cold_start.main()
