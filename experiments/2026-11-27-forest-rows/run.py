"""benchmarks/strategies.py with one more strategy registered: ``sweep_allrows``, the default
cold strategy (``bayes_sweep``) whose forest bootstraps every result into each tree, as every
forest did before trees were capped at 256 rows (``RandomForest(rows=None)``).

    python experiments/2026-11-27-forest-rows/run.py --seeds 10 --budgets 500 \
        --strategies bayes_sweep,sweep_allrows --kt-strategies "" --runs OUT.json.gz
"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import strategies
from perfport.space import Space
from perfport.strategies import STRATEGIES
from perfport.strategies.surrogates import RandomForest
from perfport.strategies.sweep import SweepBayes


class AllRowsSweep(SweepBayes):
    name = "sweep_allrows"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)

    def _forest(self) -> RandomForest:
        ok = [i for i, v in self.told.items() if v is not None]
        y = np.log(np.array([self.told[i] for i in ok]))
        forest = RandomForest(min_leaf=self.min_leaf, seed=self.seed + len(self.told), rows=None)
        return forest.fit(self.features[ok], y)


STRATEGIES["sweep_allrows"] = AllRowsSweep  # type: ignore[assignment]

if __name__ == "__main__":
    strategies.main()
