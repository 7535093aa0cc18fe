"""Beyond Cummins et al. 2016: performance vectors from neighbours that a forest chooses.

``WgPerformanceForest`` predicts a scenario's vector log(t_oracle / t_w) over all sizes w, as
``WgPerformanceKnn`` does, but its neighbours come from a random forest of multi-output
regression trees fitted to the training vectors themselves: a training scenario's weight is the
share it has, tree by tree, of the leaf the new scenario falls into (so the prediction is the
forest's own). The kNN measures closeness in every feature alike; the trees split only on
the features that separate scenarios whose best sizes differ, which is what generalises to a
kernel or device that training has not seen.

Fitting needs scikit-learn (``pip install 'perfport[models]'``); the fitted predictor keeps
only numpy arrays (each tree's nodes, every training scenario's leaf and bootstrap count), so a
saved model predicts without it, in a fraction of a millisecond.
"""

from __future__ import annotations

import numpy as np

from perfport._core.optional import sklearn
from perfport.wg.dataset import WgDataset
from perfport.wg.predictors.base import SKLEARN_PURPOSE, check_settings
from perfport.wg.predictors.k_nearest_neighbours import WgPerformanceKnn
from perfport.wg.predictors.novelty import DeviceNovelty
from perfport.wg.predictors.vectors import REFUSED_LOG


class WgPerformanceForest(WgPerformanceKnn):
    """Random-forest neighbours for the vector of log relative performance over all sizes."""

    def __init__(
        self,
        trees: int = 100,
        min_leaf: int = 5,
        max_features: float = 1.0,
        fallback: bool = False,
        margin: float = 2.0,
        novelty: float | None = None,
        seed: int = 0,
        cpu_class: bool = False,
    ) -> None:
        self.trees, self.min_leaf, self.max_features = trees, min_leaf, max_features
        self.fallback, self.margin, self.novelty, self.seed = fallback, margin, novelty, seed
        self.cpu_class = cpu_class

    @property
    def name(self) -> str:
        return (
            "performance_forest" if not self.fallback
            else "performance_forest+fixed" if self.novelty is None
            else "performance_forest+novel_cpu" if self.cpu_class
            else "performance_forest+novel"
        )  # fmt: skip

    def _check_settings(self) -> None:
        check_settings(
            self.trees >= 1 and self.min_leaf >= 1 and 0 < self.max_features <= 1
            and self.margin >= 0,
            "trees >= 1, min_leaf >= 1, 0 < max_features <= 1, margin >= 0 (given "
            f"{self.trees}, {self.min_leaf}, {self.max_features}, {self.margin})",
        )  # fmt: skip
        check_settings(
            self.novelty is None or (self.fallback and 0 < self.novelty < 1),
            "novelty (a level in (0, 1)) gates the fallback: set fallback=True",
        )
        check_settings(
            not self.cpu_class or self.novelty is not None,
            "cpu_class groups CPUs in the novelty test: set novelty",
        )

    def fit(self, data: WgDataset) -> WgPerformanceForest:
        self._check_settings()
        self._fit_vectors(data)
        if self.novelty is not None:  # _check_settings saw to the fallback
            self.novelty_ = DeviceNovelty(self.novelty, self.cpu_class).fit(data)
        x = np.asarray(data.features, dtype=np.float64)
        # The trees need a value everywhere: a size above a scenario's limit counts as refused.
        floor = np.nanmin(self.vectors_, axis=1, keepdims=True) + REFUSED_LOG
        y = np.where(np.isfinite(self.vectors_), self.vectors_, floor)
        tree_module = sklearn("tree", SKLEARN_PURPOSE)
        rng = np.random.default_rng(self.seed)
        n = len(data)
        fitted, counts, leaves = [], [], []
        for _ in range(self.trees):
            count = rng.multinomial(n, np.full(n, 1.0 / n)).astype(np.float64)  # bootstrap
            tree = tree_module.DecisionTreeRegressor(
                min_samples_leaf=self.min_leaf,
                max_features=self.max_features,
                random_state=int(rng.integers(2**31)),
            ).fit(x, y, sample_weight=count)
            fitted.append(tree.tree_)
            counts.append(count)
            leaves.append(tree.apply(x))
        # Every tree's nodes in one flat array, tree i's at offset i * nodes; a leaf's children
        # are itself (feature 0, threshold +inf), so all trees walk the same number of steps.
        nodes = max(t.node_count for t in fitted)
        self.offsets_ = np.arange(self.trees) * nodes
        self.feature_ = np.zeros(self.trees * nodes, dtype=np.int64)
        self.threshold_ = np.full(self.trees * nodes, np.inf)
        self.left_ = np.tile(np.arange(nodes), self.trees)
        self.right_ = self.left_.copy()
        for offset, t in zip(self.offsets_, fitted, strict=True):
            inner = np.flatnonzero(t.children_left >= 0)
            self.feature_[offset + inner] = t.feature[inner]
            self.threshold_[offset + inner] = t.threshold[inner]
            self.left_[offset + inner] = t.children_left[inner]
            self.right_[offset + inner] = t.children_right[inner]
        self.depth_ = max(t.max_depth for t in fitted)
        self.counts_ = np.array(counts)  # (trees, scenarios)
        self.leaves_ = np.array(leaves)  # (trees, scenarios)
        return self

    def leaves(self, x: np.ndarray) -> np.ndarray:
        """The leaf each tree puts a scenario with features ``x`` in."""
        x = np.asarray(x, dtype=np.float32).astype(np.float64)  # as scikit-learn's trees compare
        # The fitted forest's own count, not the setting: set_params does not refit.
        node = np.zeros(len(self.offsets_), dtype=np.int64)
        for _ in range(self.depth_):
            at = self.offsets_ + node
            left = x[self.feature_[at]] <= self.threshold_[at]
            node = np.where(left, self.left_[at], self.right_[at])
        return node

    def leaves_many(self, x: np.ndarray) -> np.ndarray:
        """(rows, trees): ``leaves`` of each row of ``x``, all rows walked at once."""
        x = np.asarray(x, dtype=np.float32).astype(np.float64)
        row = np.arange(len(x))[:, None]
        node = np.zeros((len(x), len(self.offsets_)), dtype=np.int64)
        for _ in range(self.depth_):
            at = self.offsets_ + node
            left = x[row, self.feature_[at]] <= self.threshold_[at]
            node = np.where(left, self.left_[at], self.right_[at])
        return node

    def neighbours_many(self, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """``neighbours`` of each row of ``x``, the same values: one walk of the trees and one
        weighted count for all rows (each row's weights added in the same order as alone)."""
        if not len(x):
            return []
        starts, rows, shares = self._leaf_members()
        node = (self.offsets_ + self.leaves_many(x)).ravel()
        first, count = starts[node], starts[node + 1] - starts[node]
        at = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(count.sum())
        scenarios = self.counts_.shape[1]
        # Row r's members counted at r * scenarios + member: one bincount for every row.
        owner = np.repeat(np.arange(len(x)), count.reshape(len(x), -1).sum(1))
        counted = np.bincount(owner * scenarios + rows[at], shares[at], len(x) * scenarios)
        weights = counted.reshape(len(x), scenarios) / len(self.offsets_)
        found = [np.flatnonzero(w > 0) for w in weights]
        return [(f, w[f]) for f, w in zip(found, weights, strict=True)]

    def neighbours(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(training rows, their weights): the scenarios in the same leaves, each with its
        share of the leaf's bootstrap weight, averaged over the trees."""
        starts, rows, shares = self._leaf_members()
        node = self.offsets_ + self.leaves(x)
        first, count = starts[node], starts[node + 1] - starts[node]
        # The members of every tree's leaf, gathered without a loop over the trees.
        at = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(count.sum())
        weights = np.bincount(rows[at], shares[at], self.counts_.shape[1]) / len(self.offsets_)
        found = np.flatnonzero(weights > 0)
        return found, weights[found]

    def _leaf_members(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each node of the flat forest, its training scenarios (bootstrap count > 0) and
        their shares of the node's weight, as (start of each node's members, rows, shares).
        Built from ``counts_`` and ``leaves_`` at the first prediction (models saved before
        load as they are): a prediction then touches a leaf's few members per tree, not every
        scenario of every tree (a daemon answers in a fraction of the time)."""
        members = self.__dict__.get("_members")
        if members is None:
            tree, rows = np.nonzero(self.counts_ > 0)
            node = self.offsets_[tree] + self.leaves_[tree, rows]
            order = np.argsort(node, kind="stable")
            tree, rows, node = tree[order], rows[order], node[order]
            weight = self.counts_[tree, rows]
            total = np.bincount(node, weight, len(self.feature_))
            starts = np.searchsorted(node, np.arange(len(self.feature_) + 1))
            members = (starts, rows, weight / total[node])
            self.__dict__["_members"] = members
        return members

    def __getstate__(self) -> dict[str, object]:
        # Derived at the first prediction: not saved with the model.
        return {k: v for k, v in self.__dict__.items() if k != "_members"}
