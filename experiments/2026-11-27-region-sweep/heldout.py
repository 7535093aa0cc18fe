"""``prior_region`` continuing with ``bayes_sweep`` (``stall=10``, the default ``prior``'s
continuation), registered as ``region_sweep`` for benchmarks/strategies.py, so the held-out
caches can be replayed with it under that protocol (the store holds every cache given by
--data; each one's prior comes from the others of the same kernel).

    python experiments/2026-11-27-region-sweep/heldout.py --data /tmp/hub --seeds 30 \
        --budgets 200 --strategies region_sweep --kt-strategies "" --caches ... --runs OUT
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

sys.path.insert(0, "benchmarks")
import strategies
from perfport.space import Space
from perfport.strategies import STRATEGIES, PriorRegion


class RegionSweepPrior(PriorRegion):
    name = "region_sweep"

    def __init__(self, space: Space, seed: int = 0, scores: Sequence[float] | None = None) -> None:
        super().__init__(space, seed, scores=scores, stall=10)


STRATEGIES["region_sweep"] = RegionSweepPrior

if __name__ == "__main__":
    strategies.main()
