"""perfport's GP strategy (bayes_opt) with its hyperparameters refitted fully at every ask
(30 gradient steps from the last fit) instead of 8 steps every fifth ask after 20 points:
is the fit what keeps it behind Optuna's GP on the GEMMs? Scored with
benchmarks/cold_start.py's protocol; the patched strategy is registered here only.

    python experiments/2026-11-26-gp-refit/run.py --seeds 10 --jobs 2 --per-cache --caches gemm \
        --candidates bayes_gp_refit,bayes_opt \
        --runs experiments/2026-11-26-gp-refit/runs.json.gz,benchmarks/results/strategies-runs.json.gz
"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import cold_start
import perfport.strategies.bayes as bayes
from perfport.space import Space
from perfport.strategies import STRATEGIES
from perfport.strategies.surrogates import GaussianProcess


class FullRefit(GaussianProcess):
    """Always 30 steps, from the last fit when there is one."""

    def __init__(self, steps: int = 30, warm: np.ndarray | None = None) -> None:
        super().__init__(steps=30, warm=warm)


class RefitBayes(bayes.BayesianOptimization):
    name = "bayes_gp_refit"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed, surrogate="gp")

    def ask(self) -> int | None:
        bayes.GaussianProcess = FullRefit  # type: ignore[misc]
        try:
            return super().ask()
        finally:
            bayes.GaussianProcess = GaussianProcess  # type: ignore[misc]


STRATEGIES["bayes_gp_refit"] = RefitBayes  # type: ignore[assignment]

if __name__ == "__main__":
    cold_start.main()
