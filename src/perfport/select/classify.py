"""Runtime selectors: from a problem's features, which of the k shipped configurations to run
(Lawson, section 5).

``Selector`` follows scikit-learn's conventions (the constructor stores its arguments as given,
``get_params``/``set_params`` so ``sklearn.base.clone`` works, ``fit`` learns, fitted
attributes end in ``_``, ``NotFittedError`` before ``fit``) and wraps one scikit-learn model by composition:

- decision trees A (unlimited), B (depth <= 6, >= 3 samples per leaf) and C (depth <= 3,
  >= 4 samples per leaf), as in the paper, and a random forest see the raw features. A tree's
  splits depend only on the order of each feature's values, so scaling would change nothing
  but the thresholds, and raw thresholds let generated code compare the user's sizes as given.
  ``model_`` is then the ``DecisionTreeClassifier`` itself: ``model_.tree_`` holds the splits
  and ``model_.classes_[argmax(model_.tree_.value[leaf])]`` is a leaf's answer.
- 1/3/7-nearest-neighbours, linear and RBF SVMs and the MLP see ``sign(x) log2(1 + |x|)`` of
  each feature, standardised: sizes span orders of magnitude, and without the log the largest
  sizes would dominate every distance (and the SVM margins); ``log2(1 + x)`` leaves 0/1 flags
  at 0/1. ``model_`` is then a scikit-learn Pipeline.

``decision_tree_a_derived`` and ``decision_tree_b_derived`` are trees A and B that also see
derived features (``perfport.select.derive``: output size ``M*N``, ``M*N*batch``, work
``K*M*N*batch``, divisibility of each size by 16-128), chosen from the feature names and the
training rows at ``fit`` and stored in ``derived_``; generated code computes them exactly.

The label of a training problem is the index, within the chosen set, of the chosen
configuration that ran fastest on it (``best_in_set``); ``predict`` answers with such indices.

``decision_tree_regret_derived`` (beyond the paper) is tree A over the same features with
another split criterion. It is a regression tree whose targets are, per training problem, the
log fraction of the best in the set that each chosen configuration reaches
(``regret_targets``). A split is chosen to reduce the squared error of those vectors, so
separating problems on which a wrong choice is expensive counts for much, and a problem on
which every configuration runs about as fast (a vector near 0) hardly counts; the label
tree's Gini criterion counts every label alike. A leaf answers the configuration with the
best mean there (the geometric mean the selector is scored by); grown like tree A, a leaf
holds problems with equal features only, usually one, and answers its best. ``fit`` takes
those times as ``times``; without them each problem's target is its label alone. ``model_``
is then the ``DecisionTreeRegressor``, one output per chosen configuration, and generated
code is nested ifs as for the other trees.

``decision_tree_distilled_derived`` (beyond the paper) is a forest's answers in one tree. A
random forest of regret trees (``DISTIL_TREES`` of them) chose better than one regret tree on
the GEMM tables, but is no deployable nested-ifs selector. So the forest answers the training
problems and ``DISTIL_POINTS`` made-up ones, and a tree grown like tree A learns those
answers. Half are drawn around the training problems (one with each size scaled by a factor
between 1/2 and 2, rounded where the sizes are whole); half recombine them (each size taken
from a random training problem), so they carry the sizes, and the divisibility, that real
problems have. ``model_`` is that ``DecisionTreeClassifier``; it needs ``times`` as the
regret tree does.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np

from perfport._core.estimator import Estimator
from perfport._core.optional import sklearn
from perfport.select.derive import Derived, default_derived, size_features, with_derived
from perfport.select.errors import SelectError, member
from perfport.select.prune import GEOMEAN_FLOOR
from perfport.select.table import PerfTable


class Classifier(Enum):
    DECISION_TREE_A = "decision_tree_a"
    DECISION_TREE_B = "decision_tree_b"
    DECISION_TREE_C = "decision_tree_c"
    NEAREST_1 = "1nn"
    NEAREST_3 = "3nn"
    NEAREST_7 = "7nn"
    LINEAR_SVM = "linear_svm"
    RBF_SVM = "rbf_svm"
    RANDOM_FOREST = "random_forest"
    MLP = "mlp"
    DECISION_TREE_A_DERIVED = "decision_tree_a_derived"
    DECISION_TREE_B_DERIVED = "decision_tree_b_derived"
    DECISION_TREE_REGRET_DERIVED = "decision_tree_regret_derived"
    DECISION_TREE_DISTILLED_DERIVED = "decision_tree_distilled_derived"

    @property
    def is_tree(self) -> bool:
        """A single decision tree: emitted as nested ifs by code generation."""
        return self.value.startswith("decision_tree")

    @property
    def regret(self) -> bool:
        """A regression tree over every chosen configuration's performance."""
        return "_regret" in self.value

    @property
    def learns_costs(self) -> bool:
        """Learns from every chosen configuration's time (``Selector.fit``'s ``times``)."""
        return self.regret or "_distilled" in self.value

    @property
    def derives(self) -> bool:
        """Sees derived features (products, divisibility) besides the problem's own."""
        return self.value.endswith("_derived")


# (max_depth, min_samples_leaf) of the paper's trees A, B and C.
TREE_LIMITS = {
    Classifier.DECISION_TREE_A: (None, 1),
    Classifier.DECISION_TREE_B: (6, 3),
    Classifier.DECISION_TREE_C: (3, 4),
    Classifier.DECISION_TREE_A_DERIVED: (None, 1),
    Classifier.DECISION_TREE_B_DERIVED: (6, 3),
    Classifier.DECISION_TREE_REGRET_DERIVED: (None, 1),
    Classifier.DECISION_TREE_DISTILLED_DERIVED: (None, 1),
}
# The distilled tree's forest, and how many made-up problems it answers (5,000, half with sizes
# within 2x of a training problem, half recombined; chosen among a few settings tried on the
# GEMM tables, the tree stays at a few hundred nodes: docs/results/2026-11-23-select-regret-tree.md
# and 2026-11-23-select-recombined.md).
DISTIL_TREES = 100
DISTIL_POINTS = 5000
_NEIGHBOURS = {Classifier.NEAREST_1: 1, Classifier.NEAREST_3: 3, Classifier.NEAREST_7: 7}
# Models that fit a single class without complaint; the others get a constant answer.
_ONE_CLASS_OK = {*TREE_LIMITS, *_NEIGHBOURS, Classifier.RANDOM_FOREST}


_PURPOSE = "Kernel-subset selectors"  # named in the missing-extra error


def log_features(x: np.ndarray) -> np.ndarray:
    """sign(x) * log2(1 + |x|): sizes on a log scale, 0 and 1 (flags) unchanged."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.log2(1.0 + np.abs(x))


def best_in_set(times: np.ndarray, chosen: Sequence[int] | np.ndarray) -> np.ndarray:
    """Per problem row, the index within ``chosen`` of its fastest configuration; -1 where none
    of them ran (NaN)."""
    sub = np.asarray(times, dtype=np.float64)[:, np.asarray(chosen, dtype=np.intp)]
    ran = np.isfinite(sub).any(axis=1)
    labels = np.full(len(sub), -1, dtype=np.intp)
    labels[ran] = np.nanargmin(sub[ran], axis=1)
    return labels


def regret_targets(times: np.ndarray, floor: float) -> np.ndarray:
    """Per problem row (positive times of the chosen configurations), log(t_best_in_set / t)
    of each: 0 for the fastest, negative for the others, ``log(floor)`` for one that is that
    much slower or more, or did not run (NaN)."""
    t = np.asarray(times, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.nanmin(t, axis=1, keepdims=True) / t
    return np.log(np.where(np.isfinite(fraction), np.maximum(fraction, floor), floor))


def problems_around(
    rows: np.ndarray, sizes: Sequence[int], count: int, rng: np.random.Generator
) -> np.ndarray:
    """``count`` problems near ``rows``: a random row each, with every column in ``sizes``
    scaled by 2**u, u uniform in [-1, 1]. A column of whole numbers stays whole: rounded, with
    0 kept and no other value rounded to 0 (so signs and divisibility stay meaningful)."""
    near = np.array(rows, dtype=np.float64)[rng.integers(len(rows), size=count)]
    near[:, sizes] *= 2.0 ** rng.uniform(-1.0, 1.0, (count, len(sizes)))
    whole = [j for j in sizes if (rows[:, j] == np.round(rows[:, j])).all()]
    v = near[:, whole]
    near[:, whole] = np.sign(v) * np.maximum(np.abs(np.round(v)), v != 0)  # 0 stays 0
    return near


def problems_recombined(
    rows: np.ndarray, sizes: Sequence[int], count: int, rng: np.random.Generator
) -> np.ndarray:
    """``count`` problems made of ``rows``' own values: a random row each, with every column
    in ``sizes`` taken from a random row (drawn per column). The other columns (flags) stay
    as in the first row."""
    rows = np.asarray(rows, dtype=np.float64)
    mixed = rows[rng.integers(len(rows), size=count)]
    for j in sizes:
        mixed[:, j] = rows[rng.integers(len(rows), size=count), j]
    return mixed


class Selector(Estimator):
    """Predicts which chosen configuration (an index into the chosen set) to run.

    A scikit-learn-style estimator: ``classifier`` and ``seed`` are stored as given
    (``get_params``, ``set_params``, ``sklearn.base.clone``); ``fit`` checks the classifier's
    name (UnknownNameError, a SelectError and a ValueError) and keeps it as ``classifier_``;
    ``predict`` before ``fit`` raises ``NotFittedError`` (scikit-learn's, and a
    PerfportError)."""

    def __init__(self, classifier: Classifier | str = Classifier.DECISION_TREE_A, seed: int = 0):
        self.classifier = classifier
        self.seed = seed

    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        feature_names: Sequence[str] | None = None,
        times: np.ndarray | None = None,
    ) -> Selector:
        """Learn from problem features (rows x features) and their labels (chosen-set
        indices, as from ``best_in_set``); rows labelled -1 (nothing ran) are skipped.
        ``times`` (rows x chosen configurations, NaN where one did not run) is what the regret
        and distilled trees learn from; the other classifiers need only the labels."""
        self.classifier_ = member(Classifier, self.classifier, "classifier")
        x = np.asarray(features, dtype=np.float64)
        y = np.asarray(labels, dtype=np.intp)
        if x.ndim != 2 or len(x) != len(y):
            raise SelectError(f"features {x.shape} and labels {y.shape} do not match")
        if x.shape[1] == 0:
            raise SelectError("no problem feature to learn from; give at least one number")
        if times is not None:
            times = np.asarray(times, dtype=np.float64)
            if times.ndim != 2 or len(times) != len(y):
                raise SelectError(f"times {times.shape} do not have one row per label {y.shape}")
            if (times[np.isfinite(times)] <= 0).any():
                raise SelectError("times must be positive (NaN where a configuration did not run)")
            if len(y) and y.max() >= times.shape[1]:
                raise SelectError(
                    f"a label is {y.max()} but times cover {times.shape[1]} configurations"
                )
        keep = y >= 0
        x, y = x[keep], y[keep]
        if len(y) == 0:
            raise SelectError("no training problem ran any chosen configuration")
        self.feature_names_ = (
            tuple(feature_names)
            if feature_names is not None
            else tuple(f"x{i}" for i in range(x.shape[1]))
        )
        if len(self.feature_names_) != x.shape[1]:
            raise SelectError(f"{len(self.feature_names_)} feature names for {x.shape[1]} columns")
        self.n_features_in_ = x.shape[1]
        self.derived_: tuple[Derived, ...] = (
            default_derived(self.feature_names_, x) if self.classifier_.derives else ()
        )
        raw, x = x, with_derived(x, self.feature_names_, self.derived_)
        self.log_features_ = not (self.classifier_.is_tree or self._forest)
        if self.classifier_.learns_costs:
            if times is None:  # each problem's target is its label alone
                target = np.full((len(y), int(y.max()) + 1), np.log(GEOMEAN_FLOOR))
                target[np.arange(len(y)), y] = 0.0
            else:
                target = regret_targets(times[keep], GEOMEAN_FLOOR)
            if self.classifier_.regret:
                self.model_ = sklearn("tree", _PURPOSE).DecisionTreeRegressor(
                    random_state=self.seed
                )
                self.model_.fit(x, target)
                self.classes_ = np.arange(target.shape[1])  # what it can answer: every output
                return self
            x, y = self._distil(raw, x, target)
        self.classes_ = np.unique(y)
        if len(self.classes_) == 1 and self.classifier_ not in _ONE_CLASS_OK:
            self.model_ = sklearn("dummy", _PURPOSE).DummyClassifier(strategy="most_frequent")
        else:
            self.model_ = self._model(len(y))
        with warnings.catch_warnings():
            # The MLP's iteration limit is a deliberate bound on fitting time, not a fault.
            warnings.simplefilter("ignore", sklearn("exceptions", _PURPOSE).ConvergenceWarning)
            self.model_.fit(x, y)
        return self

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Chosen-set indices for problem features (rows x features, or one row)."""
        x = np.asarray(features, dtype=np.float64)
        one = x.ndim == 1
        x = np.atleast_2d(x)
        if x.shape[1] != self.n_features_in_:
            raise SelectError(f"expected {self.n_features_in_} features, got {x.shape[1]}")
        x = with_derived(x, self.feature_names_, self.derived_)
        if self.classifier_.regret:  # the configuration with the best predicted performance
            out = np.argmax(np.asarray(self.model_.predict(x)).reshape(len(x), -1), axis=1)
        else:
            out = np.asarray(self.model_.predict(x), dtype=np.intp)
        return out[:1] if one else out

    def _distil(
        self, raw: np.ndarray, x: np.ndarray, target: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The training rows and ``DISTIL_POINTS`` made-up problems (derived features
        included), each labelled with the answer of a forest of regret trees."""
        forest = sklearn("ensemble", _PURPOSE).RandomForestRegressor(
            n_estimators=DISTIL_TREES, random_state=self.seed, n_jobs=1
        )
        # scikit-learn warns on a one-column target (k = 1) and wants it flat.
        forest.fit(x, target if target.shape[1] > 1 else target[:, 0])
        names = self.feature_names_
        sizes = [names.index(n) for n in size_features(names, raw)]
        rng = np.random.default_rng(self.seed)
        half = DISTIL_POINTS // 2
        near = np.vstack(
            [
                problems_around(raw, sizes, half, rng),
                problems_recombined(raw, sizes, DISTIL_POINTS - half, rng),
            ]
        )
        x = np.vstack([x, with_derived(near, names, self.derived_)])
        return x, np.argmax(forest.predict(x).reshape(len(x), -1), axis=1)

    @property
    def _forest(self) -> bool:
        return self.classifier_ is Classifier.RANDOM_FOREST

    def _model(self, n_train: int) -> Any:
        c, seed = self.classifier_, self.seed
        if c in TREE_LIMITS:
            depth, leaf = TREE_LIMITS[c]
            return sklearn("tree", _PURPOSE).DecisionTreeClassifier(
                max_depth=depth, min_samples_leaf=leaf, random_state=seed
            )
        if c is Classifier.RANDOM_FOREST:
            # 50 trees: on a few hundred rows the vote is settled well before that, and every
            # tree costs time in an evaluation grid.
            return sklearn("ensemble", _PURPOSE).RandomForestClassifier(
                n_estimators=50, random_state=seed, n_jobs=1
            )
        if c in _NEIGHBOURS:
            model = sklearn("neighbors", _PURPOSE).KNeighborsClassifier(
                n_neighbors=min(_NEIGHBOURS[c], n_train)
            )
        elif c is Classifier.LINEAR_SVM:
            model = sklearn("svm", _PURPOSE).SVC(kernel="linear", C=1.0)
        elif c is Classifier.RBF_SVM:
            model = sklearn("svm", _PURPOSE).SVC(kernel="rbf", C=1.0, gamma="scale")
        else:
            # L-BFGS suits a few hundred rows: it converges in about 160 iterations on GEMM
            # sizes, where Adam's default schedule stops unconverged at its limit.
            model = sklearn("neural_network", _PURPOSE).MLPClassifier(
                hidden_layer_sizes=(64,), solver="lbfgs", max_iter=500, random_state=seed
            )
        pipeline = sklearn("pipeline", _PURPOSE)
        preprocessing = sklearn("preprocessing", _PURPOSE)
        return pipeline.make_pipeline(
            preprocessing.FunctionTransformer(log_features),
            preprocessing.StandardScaler(),
            model,
        )


def fit_selector(
    table: PerfTable,
    chosen: Sequence[int] | np.ndarray,
    classifier: Classifier | str = Classifier.DECISION_TREE_A,
    rows: Sequence[int] | np.ndarray | None = None,
    seed: int = 0,
) -> Selector:
    """A selector among ``chosen`` (configuration columns of ``table``) trained on ``rows``
    (all problems by default)."""
    index = np.arange(table.n_problems) if rows is None else np.asarray(rows)
    times = table.times[index][:, np.asarray(chosen, dtype=np.intp)]
    labels = best_in_set(table.times[index], chosen)
    return Selector(classifier, seed).fit(
        table.problems[index], labels, table.problem_names, times=times
    )
