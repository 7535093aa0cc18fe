"""The cold default (bayes_sweep) with other settings of its random forest: leaf size, number
of trees, dimensions tried per split (about half of them by default, as in extremely
randomised trees). Not one of them had been varied since the forest was written; every
earlier cold-start attempt changed what the forest is asked, not the forest. Scored with
benchmarks/cold_start.py's protocol (leave one cache out); registered here only.

    python experiments/2026-11-27-forest-settings/run.py --seeds 10 --jobs 2 --per-cache \
        --candidates 'sweep_forest:min_leaf=1,sweep_forest:min_leaf=4,...' \
        --runs experiments/2026-11-27-forest-settings/runs.json.gz,benchmarks/results/strategies-runs.json.gz
"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import cold_start
from perfport.space import Space
from perfport.strategies import STRATEGIES
from perfport.strategies.surrogates import RandomForest
from perfport.strategies.sweep import SweepBayes


class ForestSweep(SweepBayes):
    name = "sweep_forest"

    def __init__(
        self, space: Space, seed: int = 0, trees: int = 30, min_leaf: int = 2, tries: int = 0
    ) -> None:
        super().__init__(space, seed)
        self.trees, self.min_leaf, self.tries = trees, min_leaf, tries or None

    def _forest(self) -> RandomForest:
        ok = [i for i, v in self.told.items() if v is not None]
        y = np.log(np.array([self.told[i] for i in ok]))
        forest = RandomForest(self.trees, self.min_leaf, self.seed + len(self.told), self.tries)
        return forest.fit(self.features[ok], y)


STRATEGIES["sweep_forest"] = ForestSweep  # type: ignore[assignment]

if __name__ == "__main__":
    cold_start.main()
