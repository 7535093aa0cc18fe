"""Random-forest Bayesian optimisation that, once stuck, rates candidates by Thompson sampling
over the forest's trees instead of by expected improvement.

Read from the stored cold runs (docs/results/2026-11-26-search-crossover.md): where
``bayes_rf`` loses most to Kernel Tuner's best strategy it sits for 47-90 evaluations at
0.67-0.92 of the optimum, and on the convolution_milo caches its candidates already hold
nearly every untold configuration: the forest is shown the way out and rates it low. Expected
improvement reads the forest's mean and the spread of its trees, and that spread is narrow
where the trees agree on a wrong region, so EI keeps asking next to the incumbent.

Here, after ``stall`` evaluations without a 0.1% gain, each ask draws one tree at random
(``draw`` trees, averaged) and takes the candidate that tree predicts fastest; whether a
candidate runs is drawn too, from the same chance of success ``bayes_rf`` multiplies in. A
single tree of a bootstrap forest is a plausible model of the whole space that can disagree
with the mean about where the optimum is, which is what a stuck search needs. The first gain
returns the search to expected improvement. Before the first stall it is ``bayes_rf``,
evaluation for evaluation.

Measured cold (the same page) it is not the default: more runs reach 95% where the forest
stays stuck, but a stall of 10 is also a pause in climbs that would have finished
(conv_milo/A4000: a median 90.5 evaluations against 26.5), and its held-out mean is behind.
"""

from __future__ import annotations

import math

import numpy as np

from perfport.space import Space
from perfport.strategies.bayes import _MAX_CANDIDATES, BayesianOptimization


class ThompsonBayes(BayesianOptimization):
    """``bayes_rf``; after ``stall`` evaluations without a gain, Thompson sampling over its
    trees until the next gain."""

    name = "bayes_ts"
    summary = (
        "random-forest BO that, when stuck, picks by Thompson sampling over its trees "
        "(one tree's fastest candidate) until the next gain"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        stall: int = 10,
        draw: int = 1,
        max_candidates: int = _MAX_CANDIDATES,
    ) -> None:
        if stall < 1 or draw < 1:
            raise ValueError(f"stall and draw must be >= 1, got {stall}, {draw}")
        super().__init__(space, seed, surrogate="rf", max_candidates=max_candidates)
        self.stall, self.draw = stall, draw
        self._misses = 0
        self._incumbent = math.inf

    @property
    def stuck(self) -> bool:
        """Whether the next ask samples a tree instead of maximising EI."""
        return self._misses >= self.stall

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if value is not None and value < self._incumbent * (1.0 - 1e-3):
            self._incumbent, self._misses = value, 0
        elif len(self.told) > self.initial:
            self._misses += 1

    def ask(self) -> int | None:
        if not self.stuck:
            return super().ask()
        untold = self._untold()
        if not len(untold):
            return None
        candidates = self._candidates(untold)
        forest = self._forest()
        # Seeded by the count of tells, like the forest, so replaying a campaign's tells on
        # resume reproduces the draws.
        rng = np.random.default_rng([self.seed, 2, len(self.told)])
        trees = rng.choice(forest.trees, size=min(self.draw, forest.trees), replace=False)
        sampled = forest.predict_trees(self.features[candidates])[trees].mean(0)
        runs = rng.random(len(candidates)) < self._success(candidates)
        if not runs.any():
            runs[:] = True
        # One tree is piecewise constant: many candidates share its lowest leaf, and the
        # random key picks among them rather than the lowest index.
        order = np.lexsort((rng.random(len(candidates)), np.where(runs, sampled, np.inf)))
        return int(candidates[order[0]])
