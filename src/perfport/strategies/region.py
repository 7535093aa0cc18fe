"""The relatives' whole ranking as a search region, not only their top picks (issue 27).

On the Kernel Tuner caches with relatives, the prior's ranking of all configurations agrees
with the new device's times far better than its ranking of its own best ones does (on
conv_milo/A100 a rank correlation of 0.82 over the space, -0.17 within the prior's top 10%; the
A100's optimum is at the prior's 8th percentile). So the prior says well *where* the good
configurations are and badly *which* they are. After its picks, ``prior`` (``PriorGuided``)
lets the forest search the prior's top fraction of the space with the forests here, choosing
by its own measurements inside it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfport.strategies.bayes import BayesianOptimization, BayesRandomForest
from perfport.strategies.sweep import SweepBayes


def top_region(scores: Sequence[float] | np.ndarray, fraction: float) -> np.ndarray:
    """Which configurations the prior rates in its best ``fraction`` of those it knows (ties at
    the cut included); never one it knows nothing of (NaN)."""
    values = np.asarray(scores, dtype=np.float64)
    known = np.isfinite(values)
    if not known.any():
        return known
    cut = np.quantile(values[known], 1.0 - fraction)
    return known & (values >= cut)


class _Region(BayesianOptimization):
    """A forest whose candidates are limited to ``allowed`` (None: every configuration). It
    still learns from every measurement, inside the region or not."""

    allowed: np.ndarray | None = None

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


class RegionForest(_Region, BayesRandomForest):
    """``bayes_rf`` limited to a region."""


class RegionSweep(_Region, SweepBayes):
    """``bayes_sweep`` limited to a region; its sweeps are not (a climb from the incumbent
    goes wherever one parameter leads)."""
