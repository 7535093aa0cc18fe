"""The relatives' whole ranking as a search region, not only their top picks (issue 27).

On the Kernel Tuner caches with relatives, the prior's ranking of all configurations agrees
with the new device's times far better than its ranking of its own best ones does (on
conv_milo/A100 a rank correlation of 0.82 over the space, -0.17 within the prior's top 10%; the
A100's optimum is at the prior's 8th percentile). So the prior says well *where* the good
configurations are and badly *which* they are. ``PriorRegion`` takes the prior's picks as
``prior`` does, then lets the forest search the prior's top fraction of the space, choosing by
its own measurements inside it, and drops the region once configurations outside it do better.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfport.space import Space
from perfport.strategies.bayes import BayesRandomForest
from perfport.strategies.ordered import PriorGuided


def top_region(scores: Sequence[float] | np.ndarray, fraction: float) -> np.ndarray:
    """Which configurations the prior rates in its best ``fraction`` of those it knows (ties at
    the cut included); never one it knows nothing of (NaN)."""
    values = np.asarray(scores, dtype=np.float64)
    known = np.isfinite(values)
    if not known.any():
        return known
    cut = np.quantile(values[known], 1.0 - fraction)
    return known & (values >= cut)


class RegionForest(BayesRandomForest):
    """``bayes_rf`` whose candidates are limited to ``allowed`` (None: every configuration).
    The forest still learns from every measurement, inside the region or not."""

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self.allowed: np.ndarray | None = None

    def _limit(self, untold: np.ndarray) -> np.ndarray:
        if self.allowed is not None:
            inside = untold[self.allowed[untold]]
            if len(inside):  # an exhausted region: the whole space again
                return inside
        return untold

    # Both ways the forest picks (its space-filling start and the acquisition) keep to it.
    def _candidates(self, untold: np.ndarray) -> np.ndarray:
        return super()._candidates(self._limit(untold))

    def _spread(self, untold: np.ndarray) -> int:
        return super()._spread(self._limit(untold))


class PriorRegion(PriorGuided):
    """``prior``, then ``bayes_rf`` inside the prior's best ``region`` fraction of the space.

    - The ``first`` picks (spread out) and the ``give_up`` fallback are ``prior``'s; the
      fallback drops the region too.
    - After them, the forest's candidates are the configurations the prior rates in its best
      ``region`` fraction, except every ``outside_every``-th evaluation, whose candidates are
      those outside it: the forest's own test of the region.
    - Once ``judge`` evaluations outside have run, the region is dropped for good as soon as
      the best time outside beats the best inside: a prior that misleads about where the good
      configurations are stops limiting the search, which goes on as plain ``bayes_rf``.

    Without scores it is exactly ``bayes_rf``, as ``prior`` with ``stall=0`` is."""

    name = "prior_region"
    summary = (
        "prior's picks, then bayes_rf within the prior's best 15% of the space (every 4th "
        "evaluation outside it); the region dropped once outside does better"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        scores: Sequence[float] | None = None,
        first: int = 10,
        give_up: int = 3,
        region: float = 0.15,
        outside_every: int = 4,
        judge: int = 2,
    ) -> None:
        if not 0.0 < region <= 1.0 or outside_every < 0 or judge < 1:
            raise ValueError(
                "region must be in (0, 1], outside_every >= 0 and judge >= 1, got "
                f"{region}, {outside_every}, {judge}"
            )
        self.region, self.outside_every, self.judge = region, outside_every, judge
        self._inside: np.ndarray | None = None  # the region; None: dropped, or no prior
        self._dropped = False
        self._turn = 0
        # Its own forest replaces the continuation (stall=0: no sweep to build first).
        super().__init__(space, seed, scores=None, first=first, give_up=give_up, stall=0)
        self._then: RegionForest = RegionForest(space, seed)
        if scores is not None:
            self.rescore(scores)

    def rescore(self, scores: Sequence[float] | np.ndarray) -> None:
        super().rescore(scores)
        if not self._dropped:  # a region judged misleading stays dropped
            inside = top_region(scores, self.region)
            self._inside = inside if inside.any() else None

    def ask(self) -> int | None:
        if self._inside is None or self._next < len(self._ranking):
            self._then.allowed = self._inside
            return super().ask()
        self._turn += 1
        outside = self.outside_every and self._turn % self.outside_every == 0
        self._then.allowed = ~self._inside if outside else self._inside
        return self._then.ask()

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if self._inside is None:
            return
        # The prior's picks failing (prior's fallback) judge the region as much as the picks.
        if self._failed_in_a_row >= self.give_up or self._outside_better(self._inside):
            self._inside, self._dropped = None, True
            self._then.allowed = None

    def _outside_better(self, inside: np.ndarray) -> bool:
        """Whether, with ``judge`` evaluations outside the region, outside's best beats
        inside's."""
        outside = [v for i, v in self.told.items() if not inside[i]]
        if len(outside) < self.judge:
            return False
        ran_out = [v for v in outside if v is not None]
        ran_in = [v for i, v in self.told.items() if inside[i] and v is not None]
        if not ran_out:
            return False
        return not ran_in or min(ran_out) < min(ran_in)
