"""Normalisation, pruning and runtime selectors on tables whose right answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.select import (
    Classifier,
    Normalisation,
    PerfTable,
    Pruning,
    SelectError,
    Selector,
    best_in_set,
    choose,
    fit_selector,
    log_features,
    normalise,
    problems_around,
    problems_recombined,
    regret_targets,
    set_score,
)
from perfport.select.classify import DISTIL_POINTS

A, B = 3, 11  # the configurations that serve small and large problems


def two_regimes(n: int = 48, configs: int = 20, seed: int = 0) -> PerfTable:
    """Small problems (M <= 64) are best served by configuration A, large ones (M >= 1024) by B;
    every other configuration is at least 1.4x slower everywhere, and A and B are 3x slower
    outside their own regime."""
    rng = np.random.default_rng(seed)
    small = np.geomspace(8, 64, n // 2)
    large = np.geomspace(1024, 8192, n - n // 2)
    m = np.concatenate([small, large])
    problems = np.column_stack([m, rng.choice([64, 128, 256], n), np.full(n, 512.0)])
    base = problems.prod(axis=1) * 1e-6
    slowdown = np.tile(rng.uniform(1.4, 5.0, configs), (n, 1))
    is_small = m <= 64
    slowdown[:, A] = np.where(is_small, 1.0, 3.0)
    slowdown[:, B] = np.where(is_small, 3.0, 1.0)
    return PerfTable(
        problem_names=("M", "N", "K"),
        problems=problems,
        param_names=("tile", "wg"),
        configs=tuple((t, w) for t in range(configs // 4) for w in (8, 16, 32, 64)),
        times=base[:, None] * slowdown,
        device="synthetic",
        kernel="two-regimes",
    )


# ---- normalisation ---------------------------------------------------------------------------


def test_normalisations_follow_the_paper():
    times = np.array([[1.0, 1 / 0.95, 1 / 0.5, np.nan], [np.nan, np.nan, np.nan, np.nan]])
    rel = normalise(times, Normalisation.RELATIVE)
    np.testing.assert_allclose(rel, [[1, 0.95, 0.5, 0], [0, 0, 0, 0]])
    np.testing.assert_allclose(normalise(times, "raw_cutoff")[0], [1, 0.95, 0, 0])
    np.testing.assert_allclose(normalise(times, "standard_cutoff")[0], [1, 0.5, 0, 0])
    sig = normalise(times, Normalisation.SIGMOID)[0]
    f = lambda x: 1 / (1 + np.exp(50 * (0.85 - x)))  # noqa: E731 (the paper's formula)
    np.testing.assert_allclose(sig, [f(1.0), f(0.95), f(0.5), 0.0])
    assert f(0.85) == 0.5 and f(0.8) < 0.1
    for how in Normalisation:
        out = normalise(times, how)
        assert ((out >= 0) & (out <= 1)).all() and not out[1].any()


# ---- pruning ---------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", list(Normalisation))
@pytest.mark.parametrize("method", list(Pruning))
def test_every_method_finds_both_regimes(method, norm):
    t = two_regimes()
    chosen = choose(normalise(t.times, norm), 2, method, seed=0, features=t.problems)
    assert sorted(chosen.tolist()) == [A, B]


@pytest.mark.parametrize("method", list(Pruning))
def test_exactly_k_distinct_and_deterministic(method):
    t = two_regimes()
    norm = normalise(t.times)
    chosen = choose(norm, 5, method, seed=3, features=t.problems)
    assert len(set(chosen.tolist())) == 5 and {A, B} <= set(chosen.tolist())
    again = choose(norm, 5, method, seed=3, features=t.problems)
    assert chosen.tolist() == again.tolist()
    everything = choose(norm, 50, method, seed=0, features=t.problems)
    assert sorted(everything.tolist()) == list(range(t.n_configs))  # fewer only when impossible


@pytest.mark.parametrize("method", [p for p in Pruning if p is not Pruning.DECISION_TREE])
def test_few_rows_as_in_device_by_configuration_matrices(method):
    """A handful of devices (rows) and more configurations than rows: each device's own best
    is kept, and the rest is filled up to k."""
    rng = np.random.default_rng(2)
    norm = rng.uniform(0.1, 0.8, (3, 12))
    norm[[0, 1, 2], [4, 7, 9]] = 1.0
    chosen = choose(norm, 5, method, seed=0).tolist()
    assert len(set(chosen)) == 5 and {4, 7, 9} <= set(chosen)
    assert choose(norm[:1], 3, method).tolist()[0] == 4


def test_clustering_beats_top_n_on_a_long_tail():
    """40 problems split their 'best' between two near-identical configurations (0 and 1), and
    10 problems need configuration 2, where 0 and 1 reach only 20%. Top-N by count takes 0 and
    1; the clustering methods take one of them and 2. The other columns are noise, so that the
    problems are not a few groups of identical points."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        first, second = (1.0, 0.99) if i % 2 else (0.99, 1.0)
        rows.append([first, second, 0.3, *(0.5 + rng.uniform(0, 0.1, 5))])
    rows += [[0.2, 0.2, 1.0, *(0.1 + rng.uniform(0, 0.1, 5))] for _ in range(10)]
    norm = np.array(rows)
    assert sorted(choose(norm, 2, Pruning.TOP_N).tolist()) == [0, 1]
    for method in (Pruning.KMEANS, Pruning.PCA_KMEANS, Pruning.SPECTRAL, Pruning.HDBSCAN,
                   Pruning.GREEDY):  # fmt: skip
        chosen = choose(norm, 2, method)
        assert 2 in chosen and set_score(norm, chosen) > set_score(norm, [0, 1]), method


def test_greedy_adds_the_largest_gain_each_time():
    """Column 0 is the best single configuration (geometric mean); 2 then gains the most
    (rows 2-3 need it), though 1 is best at more rows than 2 is."""
    norm = np.array([
        [1.0, 0.9, 0.5], [0.9, 1.0, 0.5], [0.5, 0.45, 1.0], [0.6, 0.5, 1.0], [0.9, 1.0, 0.4],
    ])  # fmt: skip
    assert choose(norm, 2, Pruning.GREEDY).tolist() == [0, 2]
    assert choose(norm, 3, Pruning.GREEDY).tolist() == [0, 2, 1]


def test_choose_rejects_bad_input():
    norm = normalise(two_regimes().times)
    with pytest.raises(SelectError, match="features"):
        choose(norm, 2, Pruning.DECISION_TREE)
    with pytest.raises(SelectError, match="at least 1"):
        choose(norm, 0, Pruning.KMEANS)
    with pytest.raises(ValueError):
        choose(norm, 2, "no-such-method")


def test_rows_where_nothing_ran_are_ignored():
    t = two_regimes()
    times = np.array(t.times)
    times[::5] = np.nan
    for method in (
        Pruning.TOP_N,
        Pruning.KMEANS,
        Pruning.HDBSCAN,
        Pruning.SPECTRAL,
        Pruning.GREEDY,
    ):
        assert sorted(choose(normalise(times), 2, method).tolist()) == [A, B]


def _with_failures() -> tuple[np.ndarray, np.ndarray]:
    """10 problems x 6 configurations of relative performance (0 = failed): 0 and 4 never ran,
    5 is the optimum everywhere, 1 fails at one problem (0.95 elsewhere: the better geometric
    mean, 0.48), 2 works everywhere at 0.4, and 3 at 0.2. Features: the problem's index."""
    perf = np.zeros((10, 6))
    perf[:, 5] = 1.0
    perf[1:, 1] = 0.95
    perf[:, 2] = 0.4
    perf[:, 3] = 0.2
    return perf, np.arange(10.0)[:, None]


@pytest.mark.parametrize("method", list(Pruning))
def test_a_configuration_that_never_ran_is_never_chosen(method):
    # Once 5 reached the optimum everywhere, every gain tied and the fill took the lowest
    # index: configuration 0, which failed at every problem, and which a Dispatcher then
    # falls back to and raises.
    perf, x = _with_failures()
    chosen = choose(perf, 2, method, features=x).tolist()
    assert 5 in chosen and not {0, 4} & set(chosen), chosen
    everything = choose(perf, 6, method, features=x).tolist()
    assert sorted(everything) == [1, 2, 3, 5]  # fewer than k only when fewer ran
    cut = normalise(np.where(perf > 0, 1 / np.maximum(perf, 1e-9), np.nan), "raw_cutoff")
    # Under a cutoff the slow ones are 0 too: perf says which ran.
    assert sorted(choose(cut, 6, method, features=x, perf=perf).tolist()) == [1, 2, 3, 5]


@pytest.mark.parametrize("method", [Pruning.GREEDY, Pruning.TOP_N])
def test_ties_go_to_fewer_failures_then_own_performance(method):
    """Once the set holds the optimum everywhere, the rest is what a Dispatcher falls back to:
    2, which works everywhere, before 1, which failed at a problem, whatever their indices and
    geometric means; then by geometric mean (2 before 3)."""
    perf = _with_failures()[0]
    assert choose(perf, 3, method).tolist() == [5, 2, 3]
    assert choose(perf, 4, method).tolist() == [5, 2, 3, 1]
    swapped = perf[:, [0, 3, 2, 1, 4, 5]]  # the partly failing one at 3, the slowest at 1
    assert choose(swapped, 3, method).tolist() == [5, 2, 1]


def test_nothing_that_ran_is_refused_in_one_line():
    with pytest.raises(SelectError, match="no configuration has a correct result"):
        choose(np.zeros((3, 4)), 2, Pruning.GREEDY)
    with pytest.raises(SelectError, match="same cells"):
        choose(np.ones((3, 4)), 2, Pruning.GREEDY, perf=np.ones((3, 3)))


# ---- selectors -------------------------------------------------------------------------------


def test_labels_are_the_fastest_chosen_configuration():
    times = np.array([[3.0, 1.0, 2.0], [1.0, np.nan, 5.0], [np.nan, np.nan, np.nan]])
    assert best_in_set(times, [2, 1]).tolist() == [1, 0, -1]
    assert best_in_set(times, [1]).tolist() == [0, -1, -1]


def test_log_features_keep_flags():
    assert log_features(np.array([0.0, 1.0, 3.0, 1023.0, -3.0])).tolist() == [0, 1, 2, 10, -2]


@pytest.mark.parametrize("classifier", list(Classifier))
def test_every_classifier_separates_the_regimes(classifier):
    t = two_regimes()
    rng = np.random.default_rng(1)
    order = rng.permutation(t.n_problems)
    train, test = order[:36], order[36:]
    selector = fit_selector(t, [A, B], classifier, rows=train, seed=0)
    expected = np.where(t.problems[test, 0] <= 64, 0, 1)
    assert selector.predict(t.problems[test]).tolist() == expected.tolist()
    assert selector.feature_names_ == ("M", "N", "K")
    assert selector.log_features_ is not (classifier.is_tree or classifier.value == "random_forest")


@pytest.mark.parametrize(
    ("classifier", "depth", "leaf"),
    [("decision_tree_a", None, 1), ("decision_tree_b", 6, 3), ("decision_tree_c", 3, 4)],
)
def test_trees_expose_the_fitted_sklearn_tree(classifier, depth, leaf):
    t = two_regimes()
    selector = fit_selector(t, [B, A], classifier)
    model = selector.model_
    assert (model.max_depth, model.min_samples_leaf) == (depth, leaf)
    tree = model.tree_
    # one split on M, between the regimes, in raw units: generated code compares sizes as given
    assert tree.node_count == 3 and tree.feature[0] == 0 and 64 < tree.threshold[0] < 1024
    assert selector.predict(np.array([32.0, 64, 512])).tolist() == [1]  # one row -> A's index
    assert selector.predict(np.array([[4096.0, 64, 512]])).tolist() == [0]


def test_the_regret_tree_weighs_what_a_wrong_choice_costs():
    # One feature value, five problems: A wins three by 1%, B wins two by 10x. The label tree
    # answers the majority, A; the regret tree the better geometric mean, B.
    x = np.full((5, 1), 64.0)  # a size: the distilled tree scales it around the problem
    times = np.array([[1.0, 1.01]] * 3 + [[10.0, 1.0]] * 2)
    labels = best_in_set(times, [0, 1])
    assert labels.tolist() == [0, 0, 0, 1, 1]
    assert Selector("decision_tree_a").fit(x, labels).predict(x[:1]).tolist() == [0]
    regret = Selector("decision_tree_regret_derived").fit(x, labels, times=times)
    assert regret.predict(x[:1]).tolist() == [1]
    # Without times it learns from the labels alone, like the label tree.
    assert Selector("decision_tree_regret_derived").fit(x, labels).predict(x[:1]).tolist() == [0]
    # The distilled tree learns the answers of a forest of regret trees: B as well, around
    # the training problem too (sizes scaled by up to 2x either way).
    distilled = Selector("decision_tree_distilled_derived").fit(x, labels, times=times)
    assert distilled.predict(np.array([[64.0], [100.0]])).tolist() == [1, 1]
    assert distilled.model_.tree_.n_node_samples[0] == len(x) + DISTIL_POINTS
    target = regret_targets(np.array([[2.0, 1.0, np.nan], [1.0, 5000.0, 4.0]]), 1e-3)
    np.testing.assert_allclose(target, np.log([[0.5, 1.0, 1e-3], [1.0, 1e-3, 0.25]]))
    with pytest.raises(SelectError, match="one row per label"):
        Selector("decision_tree_regret_derived").fit(x, labels, times=times[:4])
    with pytest.raises(SelectError, match="times cover 1 configurations"):
        Selector("decision_tree_regret_derived").fit(x, labels, times=times[:, :1])


def test_problems_around_keep_flags_zeros_signs_and_whole_sizes():
    rows = np.array([[0.0, -8.0, 64.0, 1.0], [16.0, -4.0, 128.0, 0.0], [32.0, 4.0, 3.5, 1.0]])
    near = problems_around(rows, [0, 1, 2], 3000, np.random.default_rng(0))
    assert near.shape == (3000, 4) and set(near[:, 3]) == {0.0, 1.0}  # flags untouched
    assert (near[:, 0] == 0).any() and (near[:, 0] >= 0).all()  # 0 stays 0, never negative
    assert (np.abs(near[:, 1]) >= 1).all() and (near[:, 1] < 0).any() and (near[:, 1] > 0).any()
    assert (near[:, :2] == np.round(near[:, :2])).all()  # whole columns stay whole
    assert not (near[:, 2] == np.round(near[:, 2])).all()  # 3.5 makes the column fractional
    ratio = near[:, 2] / np.array([64.0, 128.0, 3.5])[:, None]
    assert ((ratio >= 0.5) & (ratio <= 2.0)).any(axis=0).all()  # within 2x of some row


def test_problems_recombined_take_each_size_from_some_row_and_keep_the_rest_together():
    rows = np.array([[1.0, 10.0, 0.0, 1.0], [2.0, 20.0, 1.0, 0.0], [3.0, 30.0, 1.0, 0.0]])
    mixed = problems_recombined(rows, [0, 1], 3000, np.random.default_rng(0))
    assert mixed.shape == (3000, 4)
    assert set(mixed[:, 0]) == {1.0, 2.0, 3.0} and set(mixed[:, 1]) == {10.0, 20.0, 30.0}
    assert len({tuple(r) for r in mixed[:, :2].tolist()}) == 9  # every mix of the sizes
    # the other columns come from one row, as they were: flags are never mixed
    assert {tuple(r) for r in mixed[:, 2:].tolist()} == {(0.0, 1.0), (1.0, 0.0)}


def test_selector_edge_cases():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for classifier in Classifier:  # one class only: a constant answer, never an error
        assert Selector(classifier).fit(x, np.array([1, 1, -1])).predict(x).tolist() == [1] * 3
    with pytest.raises(SelectError, match="no training problem"):
        Selector().fit(x, np.array([-1, -1, -1]))
    with pytest.raises(SelectError, match="expected 2 features"):
        Selector().fit(x, np.array([0, 1, 0])).predict(np.ones((1, 3)))
