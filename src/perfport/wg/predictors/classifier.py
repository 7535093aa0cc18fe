"""Cummins et al. 2016's classifiers with fallbacks (section 4, their Algorithm 1).

``WgClassifier`` predicts the oracle size from scenario features (naive Bayes, logistic
regression, decision tree, random forest, SVM); a prediction that is too large for the
scenario or refused goes to a fallback: ``baseline`` (the best size legal in the most training
scenarios), ``random`` (a random size expected to be legal) or ``nearest_neighbour`` (the
expected-legal size closest to the prediction). Beyond the paper, ``weighted=True`` (methods
``classifier_weighted+fallback``) makes the classifier cost-sensitive: each training scenario
weighs what a wrong choice costs there, so scenarios where every size is near the optimum
(whose oracle label is a coin toss) count little.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from perfport._core.optional import sklearn
from perfport.wg.dataset import WgDataset
from perfport.wg.predictors.base import SKLEARN_PURPOSE, UnknownMethodError, WgPredictor

CLASSIFIERS = ("naive_bayes", "logistic", "decision_tree", "random_forest", "svm")
FALLBACKS = ("baseline", "random", "nearest_neighbour")


def regret_weights(data: WgDataset) -> np.ndarray:
    """(S,) what a wrong choice costs in each scenario: one minus the mean fraction of the
    oracle over the sizes that ran (a random choice's expected loss), scaled to mean 1. A
    small floor keeps every scenario (a size with only zero weights would vanish from some
    classifiers' classes); a scenario where no size ran gets only the floor."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: nothing ran
        fraction = np.nanmin(data.runtimes, axis=1)[:, None] / data.runtimes  # NaN: did not run
        mean = np.nanmean(fraction, axis=1)
    loss = np.nan_to_num(1.0 - mean, nan=0.0) + 1e-3
    return loss / loss.mean()


class WgClassifier(WgPredictor):
    """Predict the oracle size; fall back when it cannot run."""

    def __init__(
        self,
        classifier: str = "random_forest",
        fallback: str = "nearest_neighbour",
        seed: int = 0,
        weighted: bool = False,
    ) -> None:
        self.classifier, self.fallback = classifier, fallback
        self.seed, self.weighted = seed, weighted

    @property
    def name(self) -> str:
        return f"{self.classifier}{'_weighted' if self.weighted else ''}+{self.fallback}"

    def _estimator(self) -> Any:
        pipeline = sklearn("pipeline", SKLEARN_PURPOSE)
        preprocessing = sklearn("preprocessing", SKLEARN_PURPOSE)
        if self.classifier == "naive_bayes":
            model = sklearn("naive_bayes", SKLEARN_PURPOSE).GaussianNB()
        elif self.classifier == "logistic":
            model = sklearn("linear_model", SKLEARN_PURPOSE).LogisticRegression(max_iter=3000)
        elif self.classifier == "decision_tree":
            model = sklearn("tree", SKLEARN_PURPOSE).DecisionTreeClassifier(random_state=self.seed)
        elif self.classifier == "random_forest":
            model = sklearn("ensemble", SKLEARN_PURPOSE).RandomForestClassifier(
                n_estimators=100, random_state=self.seed
            )
        else:
            model = sklearn("svm", SKLEARN_PURPOSE).SVC(kernel="rbf", C=10.0, gamma="scale")
        return pipeline.make_pipeline(preprocessing.StandardScaler(), model)

    def fit(self, data: WgDataset) -> WgClassifier:
        for what, value, known in (("classifier", self.classifier, CLASSIFIERS),
                                   ("fallback", self.fallback, FALLBACKS)):  # fmt: skip
            if value not in known:
                raise UnknownMethodError(
                    f"unknown {what} {value!r}; choose from {', '.join(known)}"
                )
        self._store_sizes(data)
        pipeline = self._estimator()
        weight = {}
        if self.weighted:
            weight[f"{pipeline.steps[-1][0]}__sample_weight"] = regret_weights(data)
        self.model_ = pipeline.fit(data.features, data.oracle, **weight)
        return self

    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        return self.propose_own(x, max_wg, refused)[0]

    def propose_own(self, x: np.ndarray, max_wg: int, refused: set[int]) -> tuple[int, int]:
        # The class predicted is the model's own choice: one prediction gives both.
        predicted = int(self.model_.predict(x.reshape(1, -1))[0])
        return self._fallen_back(predicted, max_wg, refused), predicted

    def _fallen_back(self, predicted: int, max_wg: int, refused: set[int]) -> int:
        candidates = self._candidates(max_wg, refused)
        if predicted in candidates or not len(candidates):
            return predicted
        if self.fallback == "random":
            rng = np.random.default_rng([self.seed, len(refused), predicted])
            return int(rng.choice(candidates))
        target = self.baseline_ if self.fallback == "baseline" else predicted
        if target in candidates:
            return target
        distance = np.hypot(*(self.sizes_[candidates] - self.sizes_[target]).T)
        return int(candidates[int(np.argmin(distance))])
