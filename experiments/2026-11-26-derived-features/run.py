"""bayes_sweep whose forest also sees log sums and differences of numeric parameter pairs
(products and ratios of the values: threads per block, work per thread), scored with
benchmarks/cold_start.py's protocol. A prototype registered here, not in perfport.

    python experiments/2026-11-26-derived-features/run.py --seeds 10 --jobs 2 --per-cache \
        --candidates bayes_derived --runs experiments/2026-11-26-derived-features/runs.json.gz,benchmarks/results/strategies-runs.json.gz
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import cold_start
from perfport.space import Space
from perfport.strategies import STRATEGIES
from perfport.strategies.sweep import SweepBayes


def encode(space: Space, pairs: bool, base_log: bool) -> np.ndarray:
    """Each parameter's value position (or log2 value, ``base_log``) and, with ``pairs``, the
    sum and difference of log2 values of every pair of numeric parameters with >= 3 values;
    every column scaled to [0, 1]."""
    pos = space.positions()
    cols, logs = [], []
    for d, p in enumerate(space.params):
        if len(p.values) < 2:
            continue
        values = p.values
        numeric = all(
            isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in values
        )
        if numeric and len(values) >= 3:
            lv = np.log2(np.array(values, dtype=float))[pos[:, d]]
            logs.append(lv)
            cols.append(lv if base_log else pos[:, d].astype(float))
        else:
            cols.append(pos[:, d].astype(float))
    if pairs:
        for a, b in itertools.combinations(logs, 2):
            cols += [a + b, a - b]
    x = np.stack(cols, axis=1)
    lo, hi = x.min(0), x.max(0)
    return (x - lo) / np.where(hi > lo, hi - lo, 1.0)


class DerivedSweep(SweepBayes):
    """bayes_sweep on encoded features: the forest sees them; with ``forest_only`` the chance
    of success and the space-filling start keep the value positions."""

    name = "bayes_derived"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        stall: int = 10,
        pairs: int = 1,
        base_log: int = 1,
        forest_only: int = 0,
    ) -> None:
        super().__init__(space, seed, stall=stall)
        self.forest_only = bool(forest_only)
        self.features = encode(space, bool(pairs), bool(base_log))

    def _positions(self, method, *args):  # type: ignore[no-untyped-def]
        if not self.forest_only:
            return method(*args)
        saved, self.features = self.features, self.geometry.unit
        try:
            return method(*args)
        finally:
            self.features = saved

    def _success(self, candidates):  # type: ignore[no-untyped-def]
        return self._positions(super()._success, candidates)

    def _spread(self, untold):  # type: ignore[no-untyped-def]
        return self._positions(super()._spread, untold)


STRATEGIES["bayes_derived"] = DerivedSweep  # type: ignore[assignment]

if __name__ == "__main__":
    cold_start.main()
