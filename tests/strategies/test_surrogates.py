"""The surrogate models of Bayesian optimisation, on functions with a known shape."""

import numpy as np

from perfport.strategies.surrogates import RandomForest


def smooth(x: np.ndarray) -> np.ndarray:
    return np.sin(3 * x[:, 0]) + x[:, 1] ** 2 + 0.5 * x[:, 2] * x[:, 3]


def test_forest_learns_a_smooth_function():
    rng = np.random.default_rng(1)
    x, test = rng.random((200, 6)), rng.random((2000, 6))
    forest = RandomForest(seed=0).fit(x, smooth(x))
    mean, std = forest.predict(test)
    rmse = float(np.sqrt(np.mean((mean - smooth(test)) ** 2)))
    assert rmse < 0.5 * float(np.std(smooth(test)))  # far better than predicting the mean
    assert (std > 0).all()


def test_forest_is_exact_on_separable_data_and_deterministic():
    x = np.array([[0.0], [0.1], [0.2], [0.8], [0.9], [1.0]])
    y = np.array([1.0, 1.0, 1.0, 5.0, 5.0, 5.0])
    forest = RandomForest(trees=10, min_leaf=1, seed=3).fit(x, y)
    mean, _ = forest.predict(np.array([[0.05], [0.95]]))
    assert np.allclose(mean, [1.0, 5.0])
    again = RandomForest(trees=10, min_leaf=1, seed=3).fit(x, y).predict(x)
    assert np.array_equal(forest.predict(x)[0], again[0])


def test_forest_is_unsure_where_the_data_disagree():
    rng = np.random.default_rng(0)
    x = rng.random((120, 2))
    y = np.where(x[:, 0] < 0.5, 0.0, rng.normal(0.0, 3.0, len(x)))  # quiet left, noisy right
    _, std = RandomForest(seed=0).fit(x, y).predict(np.array([[0.2, 0.5], [0.8, 0.5]]))
    assert std[1] > 5 * std[0]


def test_forest_min_leaf_is_respected():
    x = np.linspace(0, 1, 9)[:, None]
    y = np.arange(9.0)
    forest = RandomForest(trees=1, min_leaf=3, seed=0).fit(x, y)
    leaves = forest.predict(x)[0]
    assert len(np.unique(leaves)) <= 3  # 9 rows, at least 3 a leaf (bootstrap repeats some)


def test_forest_tries_every_dimension_when_told_to():
    # One informative dimension among nine constant ones: a split that may try every
    # dimension always finds it, so the first split of every tree is on it.
    rng = np.random.default_rng(0)
    x = np.hstack([np.full((40, 9), 0.5), rng.random((40, 1))])
    y = x[:, 9] * 10
    every = RandomForest(trees=20, seed=0, tries=99).fit(x, y)  # more than d: all of them
    assert (every.dim_[:20] == 9).all()
    half = RandomForest(trees=20, seed=0).fit(x, y)  # about half: some roots cannot see it
    assert (half.dim_[:20] == -1).any()


def test_each_tree_bootstraps_at_most_rows_rows():
    rng = np.random.default_rng(2)
    x, y = rng.random((300, 3)), rng.random(300)
    capped = RandomForest(trees=5, min_leaf=1, seed=0, rows=8).fit(x, y)
    assert len(capped.dim_) <= 5 * (2 * 8 - 1)  # 8 rows: at most 8 leaves a tree
    small = x[:8], y[:8]  # no more rows than the cap: the same forest as without one
    a, b = RandomForest(seed=4, rows=8).fit(*small), RandomForest(seed=4, rows=None).fit(*small)
    assert np.array_equal(a.value_, b.value_) and np.array_equal(a.dim_, b.dim_)
