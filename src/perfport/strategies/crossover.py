"""Random-forest Bayesian optimisation whose candidates include recombinations of the best
configurations found so far.

Read from the stored cold runs (docs/results/2026-11-26-search-crossover.md): the forest's
search loses most to Kernel Tuner's best strategy where it sits for tens of evaluations on a
configuration at 0.67-0.92 of the optimum while the optimum differs from it in several
parameters at once. Its candidates are a random sample of the space (4,000 of up to 18,000)
and the one-step neighbours of its 10 best, so a configuration that takes some parameters
from one good region and the rest from another is a candidate only by chance. Kernel Tuner's
genetic algorithm, its best strategy on several caches, moves exactly that way. Here the
offspring of uniform crossover between pairs of the ``elite`` best told configurations (each
parameter taken from either parent, then, with chance ``mutation``, one parameter moved one
value step), the legal and untold ones, join the candidates; the forest's expected
improvement times the chance of success still chooses among them all. The model decides; the
recombination only widens what it is shown.

Measured cold on the Kernel Tuner caches (the same page), it is no better than ``bayes_rf``
beyond the seeds' noise: where the space has fewer than about 5,000 configurations the
forest's random sample already holds nearly every offspring, and its runs there are mostly
``bayes_rf``'s own. So it is a named strategy, not the default.
"""

from __future__ import annotations

import numpy as np

from perfport.space import Space
from perfport.strategies.bayes import _MAX_CANDIDATES, BayesianOptimization


class CrossoverBayes(BayesianOptimization):
    """``bayes_rf`` whose candidates also hold legal crossover offspring of its best."""

    name = "bayes_cross"
    summary = (
        "random-forest BO whose candidates add crossovers of the best configurations "
        "(several parameters taken from another good region at once)"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        elite: int = 8,
        children: int = 512,
        mutation: float = 0.5,
        max_candidates: int = _MAX_CANDIDATES,
    ) -> None:
        if elite < 2 or children < 1 or not 0.0 <= mutation <= 1.0:
            raise ValueError(
                "elite must be >= 2, children >= 1 and mutation in [0, 1], "
                f"got {elite}, {children}, {mutation}"
            )
        super().__init__(space, seed, surrogate="rf", max_candidates=max_candidates)
        self.elite, self.children, self.mutation = elite, children, mutation
        # Its own generator, so the forest's sample draws stay those of bayes_rf's stream
        # order and the offspring do not shift them.
        self._breed_rng = np.random.default_rng([seed, 1])

    def offspring(self) -> np.ndarray:
        """Legal, untold configurations bred from pairs of the ``elite`` best told ones."""
        ranked = sorted((v, i) for i, v in self.told.items() if v is not None)[: self.elite]
        if len(ranked) < 2:
            return np.zeros(0, dtype=np.int64)
        parents = self.geometry.pos[[i for _, i in ranked]]
        rng = self._breed_rng
        # Better parents breed more often: weight by rank (1/1, 1/2, ...), normalised.
        weight = 1.0 / np.arange(1, len(parents) + 1)
        weight /= weight.sum()
        a = rng.choice(len(parents), size=self.children, p=weight)
        b = rng.choice(len(parents), size=self.children, p=weight)
        take = rng.random((self.children, parents.shape[1])) < 0.5
        kids = np.where(take, parents[a], parents[b])
        mutate = np.flatnonzero(rng.random(self.children) < self.mutation)
        dims = rng.integers(parents.shape[1], size=len(mutate))
        steps = rng.choice(np.array([-1, 1]), size=len(mutate))
        kids[mutate, dims] = np.clip(kids[mutate, dims] + steps, 0, self.geometry.sizes[dims] - 1)
        found = {self.geometry.index(row) for row in np.unique(kids, axis=0)}
        legal = [i for i in found if i is not None and i not in self.told]
        return np.array(sorted(legal), dtype=np.int64)

    def _candidates(self, untold: np.ndarray) -> np.ndarray:
        candidates = super()._candidates(untold)
        kids = self.offspring()
        return np.union1d(candidates, kids) if len(kids) else candidates
