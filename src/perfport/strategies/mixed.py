"""Bayesian optimisation for the mixed spaces of real kernels (issue 27, item 1): ordinal and
categorical parameters encoded apart, a learned classifier of failures, and a space-filling
start sized to the space.

``bayes_rf`` sees every parameter as the position of its value, scaled to [0, 1], constants
included. Here:

- a parameter whose values are all numbers is **ordinal**: its value's rank, scaled to [0, 1]
  (listed values are usually powers of two, so ranks are the log scale);
- any other parameter (strings, mixed types) is **categorical**: one column per value,
  one-hot, scaled by 1/sqrt(2) so that two different categories are as far apart as the two
  ends of an ordinal parameter; a rank would invent an order and a distance between
  categories that the kernel does not have;
- a parameter with one value is **dropped**: it cannot split a tree, and a forest that tries
  about half the columns per split would waste its tries on it (the GEMM caches have 5 such
  parameters of 15);
- the chance that a configuration **fails** (compile error, launch refusal, wrong result) is a
  second random forest, a classifier fitted on every told configuration (1 failed, 0 ran):
  the acquisition, expected improvement of log time, is multiplied by its chance of running.
  The k-nearest vote of ``bayes_rf`` sees only distance; a forest learns that one parameter
  (a work-group too large, a tile over the local memory) decides failure whatever the others;
- the **start** is a Latin hypercube over the value positions, each point moved to the
  nearest legal, untold configuration, of ``scale * n ** 0.25`` points (clipped to 8..32) for
  a space of ``n`` legal configurations: a few more where there is more to cover, never a
  large share of a 200-evaluation budget.

Measured cold on the six Kernel Tuner caches (docs/results/2026-11-26-bayes-mixed.md, 10
seeds), it is level with ``bayes_rf`` on the mean of evaluations to 95% and behind on two
caches, so it is a named strategy, not the default.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from perfport.space import Space
from perfport.strategies.bayes import _MAX_CANDIDATES, BayesianOptimization
from perfport.strategies.surrogates import RandomForest, squared_distances

_MIN_START, _MAX_START = 8, 32
_FLOOR = 0.02  # no configuration is ruled out for good by a guess about failures


def is_ordinal(values: tuple[object, ...]) -> bool:
    """Whether a parameter's values have an order: all numbers (booleans count, as 0 and 1)."""
    return all(isinstance(v, numbers.Real) for v in values)


def encode(space: Space) -> np.ndarray:
    """Each legal configuration as features: ranks for ordinal parameters, one-hot columns for
    categorical ones, nothing for constants."""
    pos = space.positions()
    columns: list[np.ndarray] = []
    for d, param in enumerate(space.params):
        size = len(param.values)
        if size < 2:
            continue
        if is_ordinal(param.values):
            order = np.argsort(np.argsort(np.asarray(param.values, dtype=np.float64)))
            columns.append((order[pos[:, d]] / (size - 1.0))[:, None])
        else:
            columns.append(np.eye(size)[pos[:, d]] / math.sqrt(2.0))
    if not columns:
        return np.zeros((len(pos), 1))
    return np.hstack(columns)


def start_size(n: int, scale: float) -> int:
    """How many configurations the space-filling start measures in a space of ``n``."""
    return int(min(max(round(scale * n**0.25), _MIN_START), _MAX_START, n))


class MixedBayes(BayesianOptimization):
    """Random-forest Bayesian optimisation on an ordinal/categorical encoding, with a forest
    classifier of failures and a Latin-hypercube start sized to the space."""

    name = "bayes_mixed"
    summary = (
        "random-forest BO on ranks and one-hot categories, a forest classifier of failures, "
        "a Latin-hypercube start sized to the space"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        scale: float = 1.5,
        max_candidates: int = _MAX_CANDIDATES,
    ) -> None:
        if scale <= 0:
            raise ValueError(f"scale must be > 0, got {scale}")
        super().__init__(
            space,
            seed,
            surrogate="rf",
            initial=start_size(len(space), scale),
            max_candidates=max_candidates,
        )
        self.features = encode(space)
        self._design = self._latin_hypercube(self.initial)

    def _latin_hypercube(self, count: int) -> list[np.ndarray]:
        """``count`` points of the unit cube of value positions, at the middle of one stratum
        of every parameter, strata paired at random. Middles, not random points inside: the
        values are discrete, and a point near a stratum's edge would round into its neighbour,
        leaving a stratum of values unvisited."""
        d = len(self.geometry.sizes)
        strata = np.stack([self.rng.permutation(count) for _ in range(d)], axis=1)
        points = (strata + 0.5) / count
        return list(points)

    def _spread(self, untold: np.ndarray) -> int:
        """The next design point's nearest legal, untold configuration (in value positions);
        once the design is used up, the base class's maximin pick."""
        told = set(self.told)
        while self._design:
            point = self._design.pop(0)
            distance = ((self.geometry.unit[untold] - point) ** 2).sum(1)
            i = int(untold[int(np.argmin(distance))])
            if i not in told:
                return i
        return super()._spread(untold)

    def _success(self, candidates: np.ndarray) -> np.ndarray:
        """Chance of running: a forest fitted to which told configurations failed."""
        told = np.array(list(self.told))
        failed = np.array([self.told[i] is None for i in told], dtype=np.float64)
        if not failed.any():
            return np.ones(len(candidates))
        if failed.all() or len(told) < 4:
            return self._nearest_vote(candidates, told, failed)
        forest = RandomForest(trees=20, min_leaf=1, seed=self.seed + 7919 * len(told))
        p_fail, _ = forest.fit(self.features[told], failed).predict(self.features[candidates])
        return np.clip(1.0 - p_fail, _FLOOR, 1.0)

    def _nearest_vote(
        self, candidates: np.ndarray, told: np.ndarray, failed: np.ndarray
    ) -> np.ndarray:
        """Too little to fit a classifier: the Laplace-smoothed vote of the nearest told."""
        k = min(self.k, len(told))
        d = squared_distances(self.features[candidates], self.features[told])
        nearest = np.argpartition(d, k - 1, axis=1)[:, :k]
        return (k - failed[nearest].sum(1) + 1.0) / (k + 2.0)
