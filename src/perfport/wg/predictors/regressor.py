"""Cummins et al. 2016's regressors (section 4, their Algorithm 2), and one beyond the paper.

``WgRegressor`` predicts, for every candidate size, the runtime (``runtime``) or the speedup
over a reference size (``speedup``) and picks the best; a refused size is dropped and the next
best taken. ``performance`` (beyond the paper) regresses each size's fraction of the
scenario's optimum and chooses by its mean minus half the spread of the forest's trees, so
that sizes the model is unsure about need a larger predicted margin.
"""

from __future__ import annotations

import numpy as np

from perfport._core.optional import sklearn
from perfport.wg.dataset import WgDataset
from perfport.wg.predictors.base import (
    SKLEARN_PURPOSE,
    UnknownMethodError,
    WgPredictor,
    check_settings,
)

REGRESSORS = ("runtime", "speedup", "performance")


class WgRegressor(WgPredictor):
    """Predict every candidate's runtime, speedup or fraction of the optimum; take the best."""

    def __init__(self, target: str = "speedup", trees: int = 60, seed: int = 0) -> None:
        self.target, self.trees, self.seed = target, trees, seed

    @property
    def name(self) -> str:
        return f"{self.target}_regressor"

    def fit(self, data: WgDataset) -> WgRegressor:
        if self.target not in REGRESSORS:
            raise UnknownMethodError(
                f"unknown target {self.target!r}; choose from {', '.join(REGRESSORS)}"
            )
        check_settings(self.trees >= 1, f"trees must be at least 1, not {self.trees}")
        self._store_sizes(data)
        s, w = np.nonzero(data.legal)
        t = data.runtimes[s, w]
        if self.target == "runtime":
            y = -np.log(t)  # higher is better for every target
        elif self.target == "speedup":
            # Over the baseline where it ran, else over the scenario's median: a per-scenario
            # constant, so the best size is the same; only the scale the model sees changes.
            ref = data.runtimes[:, self.baseline_]
            ref = np.where(np.isfinite(ref), ref, np.nanmedian(data.runtimes, axis=1))
            y = np.log(ref[s] / t)
        else:
            y = np.log(np.nanmin(data.runtimes, axis=1)[s] / t)
        rows = np.column_stack([data.features[s], np.log2(data.sizes[w])])
        ensemble = sklearn("ensemble", SKLEARN_PURPOSE)
        self.model_ = ensemble.RandomForestRegressor(
            n_estimators=self.trees, min_samples_leaf=2, random_state=self.seed, n_jobs=1
        )
        self.model_.fit(rows, y)
        return self

    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        candidates = self._candidates(max_wg, refused)
        if not len(candidates):
            return self.baseline_
        return int(candidates[int(np.argmax(self._score(x, candidates)))])

    def propose_own(self, x: np.ndarray, max_wg: int, refused: set[int]) -> tuple[int, int]:
        # Every size scored once: the best of them is the model's own choice, the best of the
        # candidates the answer (each size's score does not depend on the others).
        score = self._score(x, np.arange(len(self.sizes_)))
        own = int(np.argmax(score))
        candidates = self._candidates(max_wg, refused)
        if not len(candidates):
            return self.baseline_, own
        return int(candidates[int(np.argmax(score[candidates]))]), own

    def _score(self, x: np.ndarray, columns: np.ndarray) -> np.ndarray:
        rows = np.column_stack(
            [np.repeat(x.reshape(1, -1), len(columns), 0), np.log2(self.sizes_[columns])]
        )
        if self.target == "performance":
            per_tree = np.stack([tree.predict(rows) for tree in self.model_.estimators_])
            return np.asarray(per_tree.mean(0) - 0.5 * per_tree.std(0))
        return np.asarray(self.model_.predict(rows))
