"""Bayesian optimisation that alternates its surrogate: the random forest on one evaluation,
the Gaussian process on the next, both fitted to everything told.

Read from the stored cold runs (docs/results/2026-11-26-search-crossover.md): on the
convolution_milo caches the forest's candidates already hold nearly every untold configuration,
yet it sits for 50-90 evaluations below 95% of the optimum, so what it lacks there is not
candidates but a model that rates the optimum's region well. The two surrogates fail on
different caches (the GP, ``bayes_opt``, reaches 95% on conv_milo/MI250X in a median 59.5
evaluations and the forest in 127; on conv_milo/A100 the forest in 166 and the GP in fewer
than 5 runs of 30), and each one's picks are data the other would not have asked for.

Measured cold (the same page) it is not the default: ahead of ``bayes_rf`` on conv_milo/MI250X
but far behind on conv_milo/A100, where the GP's picks lead the forest away from the one
configuration within 95% of the optimum, and over the 50 ms overhead goal (the GP's refits).
"""

from __future__ import annotations

import math

from perfport.space import Space
from perfport.strategies.bayes import _MAX_CANDIDATES, BayesianOptimization


class AlternatingBayes(BayesianOptimization):
    """Bayesian optimisation whose surrogate is the forest on even asks after the start and
    the Gaussian process on odd ones; the acquisition is the same for both."""

    name = "bayes_alt"
    summary = "Bayesian optimisation alternating a random forest and a Gaussian process"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        stall: int = 0,
        max_candidates: int = _MAX_CANDIDATES,
    ) -> None:
        if stall < 0:
            raise ValueError(f"stall must be >= 0, got {stall}")
        super().__init__(space, seed, surrogate="rf", max_candidates=max_candidates)
        # With stall > 0 the GP takes its turns only after that many evaluations without a
        # 0.1% gain, until the next gain: a second opinion where the forest is stuck.
        self.stall = stall
        self._misses = 0
        self._incumbent = math.inf

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if value is not None and value < self._incumbent * (1.0 - 1e-3):
            self._incumbent, self._misses = value, 0
        elif len(self.told) > self.initial:
            self._misses += 1

    def ask(self) -> int | None:
        # The count of told configurations picks the model, so a resumed run that replays
        # its tells continues with the same model it would have used.
        stuck = self._misses >= self.stall
        self.surrogate = "gp" if stuck and len(self.told) % 2 else "rf"
        return super().ask()
