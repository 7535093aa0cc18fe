"""Bayesian optimisation over legal configurations, with a Gaussian-process or random-forest
surrogate of log time and a constraint-respecting acquisition.

Only legal configurations are ever candidates. Configurations that failed (compile errors,
refusals, wrong results) are not modelled as times; instead the acquisition is multiplied by
the estimated chance of success, from the outcomes of the k nearest measured configurations,
so the search learns to stay out of regions that fail.
"""

from __future__ import annotations

import math

import numpy as np

from perfport.space import Space
from perfport.strategies.base import Strategy
from perfport.strategies.geometry import Geometry
from perfport.strategies.surrogates import GaussianProcess, RandomForest, squared_distances

_MAX_CANDIDATES = 4_000


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 for erf (|error| < 1.5e-7); numpy has no erf.
    x = np.abs(z) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * np.exp(-x * x)
    return 0.5 * (1.0 + np.sign(z) * erf)


def _normal_pdf(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def expected_improvement(
    mean: np.ndarray, std: np.ndarray, best: float, xi: float = 0.01
) -> np.ndarray:
    """EI for minimisation."""
    std = np.maximum(std, 1e-12)
    z = (best - mean - xi) / std
    return (best - mean - xi) * _normal_cdf(z) + std * _normal_pdf(z)


class BayesianOptimization(Strategy):
    """Space-filling start, then the legal, unmeasured configuration with the highest expected
    improvement of log time times the estimated chance that it runs."""

    name = "bayes_opt"
    summary = (
        "Bayesian optimisation: GP on log time, EI x chance of success over legal configurations"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        surrogate: str = "gp",
        initial: int = 8,
        neighbours: int = 5,
        max_candidates: int = _MAX_CANDIDATES,
    ) -> None:
        super().__init__(space, seed)
        self.geometry = Geometry(space)
        # What the surrogate and the distances see; a subclass may encode the space otherwise.
        self.features = self.geometry.unit
        self.rng = np.random.default_rng(seed)
        self.surrogate = surrogate
        self.initial = initial
        self.k = neighbours
        self.max_candidates = max_candidates  # how many untold configurations an ask scores
        self._theta: np.ndarray | None = None  # the GP's last hyperparameters (warm start)
        self.xi = 0.01  # EI's margin, in log time
        self.min_leaf = 2  # random forest

    def ask(self) -> int | None:
        untold = self._untold()
        if not len(untold):
            return None
        ok = [i for i, v in self.told.items() if v is not None]
        if len(ok) < min(self.initial, 2) or len(self.told) < self.initial:
            return self._spread(untold)
        candidates = self._candidates(untold)
        x = self.features
        y = np.log(np.array([self.told[i] for i in ok]))
        try:
            if self.surrogate == "gp":
                # Hyperparameters move little as points are added: fit them fully at first,
                # then briefly, every few evaluations, from the last fit.
                refit = self._theta is None or len(ok) < 20 or len(ok) % 5 == 0
                steps = (30 if self._theta is None else 8) if refit else 0
                gp = GaussianProcess(steps=steps, warm=self._theta).fit(x[ok], y)
                self._theta = gp.theta_
                mean, std = gp.predict(x[candidates])
            else:
                mean, std = self._forest().predict(x[candidates])
        except np.linalg.LinAlgError:
            return int(self.rng.choice(candidates))
        score = expected_improvement(mean, std, float(y.min()), self.xi) * self._success(candidates)
        return int(candidates[int(np.argmax(score))])

    def _forest(self) -> RandomForest:
        """The random forest of log time over every configuration that ran, seeded by the
        count of tells (so replaying a campaign's tells reproduces it)."""
        ok = [i for i, v in self.told.items() if v is not None]
        y = np.log(np.array([self.told[i] for i in ok]))
        forest = RandomForest(min_leaf=self.min_leaf, seed=self.seed + len(self.told))
        return forest.fit(self.features[ok], y)

    def _untold(self) -> np.ndarray:
        mask = np.ones(len(self.space), dtype=bool)
        mask[list(self.told)] = False
        return np.flatnonzero(mask)

    def _candidates(self, untold: np.ndarray) -> np.ndarray:
        if len(untold) <= self.max_candidates:
            return untold
        # A random sample, plus every untold neighbour of the best configurations so far.
        sample = self.rng.choice(untold, size=self.max_candidates, replace=False)
        ranked = sorted((v, i) for i, v in self.told.items() if v is not None)[:10]
        near = [j for _, i in ranked for j in self.geometry.neighbours(i) if j not in self.told]
        return np.unique(np.concatenate([sample, np.array(near, dtype=np.int64)]))

    def _spread(self, untold: np.ndarray) -> int:
        """Maximin: of a random sample, the point farthest from everything measured."""
        sample = self.rng.choice(untold, size=min(len(untold), 256), replace=False)
        if not self.told:
            return int(sample[0])
        d = squared_distances(self.features[sample], self.features[list(self.told)]).min(1)
        return int(sample[int(np.argmax(d))])

    def _success(self, candidates: np.ndarray) -> np.ndarray:
        """Chance of running, from the k nearest measured configurations (Laplace-smoothed)."""
        told = np.array(list(self.told))
        failed = np.array([self.told[i] is None for i in told])
        if not failed.any():
            return np.ones(len(candidates))
        k = min(self.k, len(told))
        d = squared_distances(self.features[candidates], self.features[told])
        nearest = np.argpartition(d, k - 1, axis=1)[:, :k]
        return (k - failed[nearest].sum(1) + 1.0) / (k + 2.0)


class BayesRandomForest(BayesianOptimization):
    """Bayesian optimisation with the random-forest surrogate."""

    name = "bayes_rf"
    summary = "Bayesian optimisation: random forest on log time, EI x chance of success"

    def __init__(self, space: Space, seed: int = 0, xi: float = 0.01) -> None:
        super().__init__(space, seed, surrogate="rf")
        self.xi = xi  # EI's margin in log time; larger explores more (a cold-start setting)


class TrustRegionBayes(BayesianOptimization):
    """Bayesian optimisation inside a trust region around the best configuration (after
    TuRBO, Eriksson et al. 2019): candidates lie in a box whose sides follow the GP's length
    scales; the box doubles after repeated improvements, halves after repeated misses, and
    starts over at full size once it has shrunk to one step. In many dimensions this spends
    the budget where improvements are, instead of on the uncertain corners of the space."""

    name = "bayes_tr"
    summary = "trust-region Bayesian optimisation (GP, EI x chance of success, adaptive box)"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        length: float = 0.8,
        successes: int = 3,
        failures: int = 4,
        global_every: int = 4,
    ) -> None:
        super().__init__(space, seed)
        self.global_every = global_every
        self.start_length = self.length = length
        self.need_successes, self.need_failures = successes, failures
        self.successes = self.failures = 0
        self._best = math.inf

    def _candidates(self, untold: np.ndarray) -> np.ndarray:
        best = self.best
        if best is None or self._theta is None or len(self.told) % self.global_every == 0:
            return super()._candidates(untold)  # now and then a global step, to escape a basin
        scale = np.exp(self._theta[:-1])
        side = self.length * scale / np.exp(np.log(scale).mean())  # same volume as a cube
        step = 1.0 / np.maximum(self.geometry.sizes - 1, 1)
        half = np.maximum(side / 2.0, step)  # never narrower than one value step
        inside = np.all(
            np.abs(self.geometry.unit[untold] - self.geometry.unit[best[0]]) <= half + 1e-9, axis=1
        )
        region = untold[inside]
        if len(region) < 8:  # an exhausted region: widen to the whole space
            return super()._candidates(untold)
        if len(region) > _MAX_CANDIDATES:
            region = self.rng.choice(region, size=_MAX_CANDIDATES, replace=False)
        return region

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if len(self.told) <= self.initial:
            if value is not None:
                self._best = min(self._best, value)
            return
        if value is not None and value < self._best * (1.0 - 1e-3):
            self._best = value
            self.successes, self.failures = self.successes + 1, 0
        else:
            self.successes, self.failures = 0, self.failures + 1
        if self.successes >= self.need_successes:
            self.length, self.successes = min(2.0 * self.length, 1.6), 0
        elif self.failures >= self.need_failures:
            self.length, self.failures = self.length / 2.0, 0
            if self.length < 1.0 / max(int(self.geometry.sizes.max()) - 1, 1):
                self.length = self.start_length  # shrunk to nothing: start over, wide
