"""Random-forest Bayesian optimisation that, once stuck, measures every configuration one
parameter away from the incumbent and climbs from there.

Read from cold replays of ``bayes_rf`` on conv_milo/MI250X: runs that stall for over a hundred
evaluations at 0.66 of the optimum sit on an incumbent whose one-parameter change (a tile
size 2 -> 4, two value steps) is within 5% of the optimum. The candidates nearly always hold
that change, yet expected improvement never picks it: the forest's model of the incumbent's
surroundings is wrong there. A sweep asks the measurement instead of the model.

After ``stall`` evaluations without a 0.1% gain, the next asks are the incumbent's untold
one-exchange neighbours (each parameter set to each of its other values, the rest kept; the
legal ones), fastest-predicted first. A gain during the sweep moves it to the new incumbent at
once (first-improvement hill climbing); a sweep that ends without one returns to expected
improvement, which must stall again before the next sweep. Before the first stall it is
``bayes_rf``, evaluation for evaluation.
"""

from __future__ import annotations

import math

import numpy as np

from perfport.space import Space
from perfport.strategies.bayes import _MAX_CANDIDATES, BayesianOptimization

_GAIN = 1e-3  # a relative gain below this is noise, not progress


class SweepBayes(BayesianOptimization):
    """``bayes_rf``; after ``stall`` evaluations without a gain, a hill climb over the
    incumbent's one-parameter changes until none improves."""

    name = "bayes_sweep"
    summary = (
        "random-forest BO that, when stuck, measures every one-parameter change of the best "
        "and climbs while one improves"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        stall: int = 10,
        max_candidates: int = _MAX_CANDIDATES,
    ) -> None:
        if stall < 1:
            raise ValueError(f"stall must be >= 1, got {stall}")
        super().__init__(space, seed, surrogate="rf", max_candidates=max_candidates)
        self.stall = stall
        self._misses = 0
        self._incumbent = math.inf
        self._climbing = False  # the last ask was a sweep's, and the sweep goes on
        self._centre: int | None = None  # whose neighbours ``_queue`` holds
        self._queue: list[int] = []

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if value is not None and value < self._incumbent * (1.0 - _GAIN):
            self._incumbent, self._misses = value, 0
        elif len(self.told) > self.initial:
            self._misses += 1

    def ask(self) -> int | None:
        if self._climbing or self._misses >= self.stall:
            pick = self._next_neighbour()
            self._climbing = pick is not None
            if pick is not None:
                return pick
            self._misses = 0  # a local optimum: expected improvement, until it stalls again
        return super().ask()

    def _next_neighbour(self) -> int | None:
        best = self.best
        if best is None:
            return None
        if best[0] != self._centre:
            self._centre, self._queue = best[0], self._ranked(best[0])
        while self._queue:
            pick = self._queue.pop(0)
            if pick not in self.told:
                return pick
        return None

    def _ranked(self, centre: int) -> list[int]:
        """The centre's untold neighbours, fastest predicted first."""
        near = np.array(
            [j for j in self.geometry.exchanges(centre) if j not in self.told], dtype=np.int64
        )
        if len(near) < 2:
            return near.tolist()
        mean, _ = self._forest().predict(self.features[near])
        # Where neighbours are likely to fail, they go later.
        key = mean - np.log(self._success(near))
        return near[np.argsort(key, kind="stable")].tolist()
