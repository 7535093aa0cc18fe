"""Work-group-size predictors of Cummins et al. 2016, section 4.

- ``WgClassifier``: predicts the oracle size from scenario features (naive Bayes, logistic
  regression, decision tree, random forest, SVM); a prediction that is too large for the
  scenario or refused goes to a fallback: ``baseline`` (the best size legal in the most
  training scenarios), ``random`` (a random size expected to be legal) or ``nearest_neighbour``
  (the expected-legal size closest to the prediction). Their Algorithm 1. Beyond the paper,
  ``weighted=True`` (methods ``classifier_weighted+fallback``) makes the classifier
  cost-sensitive: each training scenario weighs what a wrong choice costs there, so scenarios
  where every size is near the optimum (whose oracle label is a coin toss) count little.
- ``WgRegressor``: predicts, for every candidate size, the runtime (``runtime``) or the
  speedup over a reference size (``speedup``) and picks the best; a refused size is dropped and
  the next best taken. Their Algorithm 2.
- ``performance_knn`` and ``performance_knn+fixed`` (beyond the paper, in ``wgvector``): the
  whole vector of relative performance over sizes from the nearest training scenarios;
  ``performance_forest[+fixed]`` (in ``wgforest``) from the training scenarios that share a
  random forest's leaves; ``performance_forest+novel`` (the default model) applies the fixed
  fallback only to scenarios unlike every kernel their device was measured with.
- ``performance`` (beyond the paper): a regressor of each size's fraction of the scenario's
  optimum, chosen by its mean minus half the spread of the forest's trees, so that sizes the
  model is unsure about need a larger predicted margin.

All follow scikit-learn's conventions: the constructor stores settings, ``fit`` learns from a
WgDataset, fitted attributes end in ``_``. ``propose`` answers one scenario, given the sizes
already refused for it; the caller (evaluation, the daemon) retries until a size runs.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from perfport._core.optional import sklearn
from perfport.models.wgdata import WgDataset

CLASSIFIERS = ("naive_bayes", "logistic", "decision_tree", "random_forest", "svm")
FALLBACKS = ("baseline", "random", "nearest_neighbour")
REGRESSORS = ("runtime", "speedup", "performance")
# perfport.models.wgvector and perfport.models.wgforest
VECTOR_METHODS = (
    "performance_knn", "performance_knn+fixed",
    "performance_forest", "performance_forest+fixed", "performance_forest+novel",
)  # fmt: skip


_PURPOSE = "Work-group-size models"  # named in the missing-extra error


def baseline_column(data: WgDataset) -> int:
    """The size legal in the most scenarios (all of them, where one is), best by geometric-mean
    fraction of the oracle among those: the paper's baseline, the best static choice."""
    legal = data.legal
    counts = legal.sum(0)
    best = np.flatnonzero(counts == counts.max())
    oracle_t = np.nanmin(data.runtimes, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        perf = np.where(legal, np.log(oracle_t[:, None] / data.runtimes), np.nan)
    scores = np.nanmean(perf[:, best], axis=0)
    return int(best[int(np.nanargmax(scores))])


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


class WgPredictor(ABC):
    name: str

    @abstractmethod
    def fit(self, data: WgDataset) -> WgPredictor: ...

    @abstractmethod
    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        """A column of ``sizes`` for a scenario with features ``x``; never one in ``refused``."""

    def _candidates(self, max_wg: int, refused: set[int]) -> np.ndarray:
        area = self.sizes_[:, 0] * self.sizes_[:, 1]
        ok = area <= max_wg
        ok[list(refused)] = False
        return np.flatnonzero(ok)

    def _store_sizes(self, data: WgDataset) -> None:
        self.sizes_ = data.sizes
        self.baseline_ = baseline_column(data)


class WgClassifier(WgPredictor):
    """Predict the oracle size; fall back when it cannot run."""

    def __init__(
        self,
        classifier: str = "random_forest",
        fallback: str = "nearest_neighbour",
        seed: int = 0,
        weighted: bool = False,
    ) -> None:
        if classifier not in CLASSIFIERS or fallback not in FALLBACKS:
            raise ValueError(f"classifier in {CLASSIFIERS}, fallback in {FALLBACKS}")
        self.classifier, self.fallback = classifier, fallback
        self.seed, self.weighted = seed, weighted
        self.name = f"{classifier}{'_weighted' if weighted else ''}+{fallback}"

    def _estimator(self) -> Any:
        pipeline, preprocessing = sklearn("pipeline", _PURPOSE), sklearn("preprocessing", _PURPOSE)
        if self.classifier == "naive_bayes":
            model = sklearn("naive_bayes", _PURPOSE).GaussianNB()
        elif self.classifier == "logistic":
            model = sklearn("linear_model", _PURPOSE).LogisticRegression(max_iter=3000)
        elif self.classifier == "decision_tree":
            model = sklearn("tree", _PURPOSE).DecisionTreeClassifier(random_state=self.seed)
        elif self.classifier == "random_forest":
            model = sklearn("ensemble", _PURPOSE).RandomForestClassifier(
                n_estimators=100, random_state=self.seed
            )
        else:
            model = sklearn("svm", _PURPOSE).SVC(kernel="rbf", C=10.0, gamma="scale")
        return pipeline.make_pipeline(preprocessing.StandardScaler(), model)

    def fit(self, data: WgDataset) -> WgClassifier:
        self._store_sizes(data)
        pipeline = self._estimator()
        weight = {}
        if self.weighted:
            weight[f"{pipeline.steps[-1][0]}__sample_weight"] = regret_weights(data)
        self.model_ = pipeline.fit(data.features, data.oracle, **weight)
        return self

    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        predicted = int(self.model_.predict(x.reshape(1, -1))[0])
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


class WgRegressor(WgPredictor):
    """Predict every candidate's runtime, speedup or fraction of the optimum; take the best."""

    def __init__(self, target: str = "speedup", trees: int = 60, seed: int = 0) -> None:
        if target not in REGRESSORS:
            raise ValueError(f"target in {REGRESSORS}")
        self.target, self.trees, self.seed = target, trees, seed
        self.name = f"{target}_regressor"

    def fit(self, data: WgDataset) -> WgRegressor:
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
        ensemble = sklearn("ensemble", _PURPOSE)
        self.model_ = ensemble.RandomForestRegressor(
            n_estimators=self.trees, min_samples_leaf=2, random_state=self.seed, n_jobs=1
        )
        self.model_.fit(rows, y)
        return self

    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        candidates = self._candidates(max_wg, refused)
        if not len(candidates):
            return self.baseline_
        rows = np.column_stack(
            [np.repeat(x.reshape(1, -1), len(candidates), 0), np.log2(self.sizes_[candidates])]
        )
        if self.target == "performance":
            per_tree = np.stack([tree.predict(rows) for tree in self.model_.estimators_])
            score = per_tree.mean(0) - 0.5 * per_tree.std(0)
        else:
            score = self.model_.predict(rows)
        return int(candidates[int(np.argmax(score))])


def make_predictor(name: str, seed: int = 0) -> WgPredictor:
    """``classifier[_weighted]+fallback`` (e.g. ``random_forest+nearest_neighbour``),
    ``{runtime,speedup,performance}_regressor``, ``performance_{knn,forest}[+fixed]`` or
    ``performance_forest+novel``."""
    if name in VECTOR_METHODS:  # their modules subclass WgPredictor, so import them here
        fallback = name.endswith(("+fixed", "+novel"))
        if name.startswith("performance_forest"):
            from perfport.models.wgforest import WgPerformanceForest

            novelty = 0.05 if name.endswith("+novel") else None  # a conventional level
            return WgPerformanceForest(fallback=fallback, novelty=novelty, seed=seed)
        from perfport.models.wgvector import WgPerformanceKnn

        return WgPerformanceKnn(fallback=fallback)
    if name.endswith("_regressor"):
        return WgRegressor(name.removesuffix("_regressor"), seed=seed)
    classifier, _, fallback = name.partition("+")
    if name not in METHODS and name not in {c + w for c in CLASSIFIERS for w in ("", "_weighted")}:
        raise ValueError(f"unknown method {name}; methods: {', '.join(METHODS)}")
    weighted = classifier.endswith("_weighted")
    return WgClassifier(
        classifier.removesuffix("_weighted"), fallback or "nearest_neighbour", seed, weighted
    )


METHODS: tuple[str, ...] = (
    *(f"{c}+{f}" for c in CLASSIFIERS for f in FALLBACKS),
    *(f"{c}_weighted+{f}" for c in CLASSIFIERS for f in FALLBACKS),
    *(f"{r}_regressor" for r in REGRESSORS),
    *VECTOR_METHODS,
)
