"""bayes_mixed: ranks and one-hot categories, a forest classifier of failures, a Latin
hypercube start sized to the space."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_conformance import DATA

from perfport._core import Param
from perfport.space import Space
from perfport.strategies import STRATEGIES, MixedBayes
from perfport.strategies.mixed import encode, start_size
from perfport.tune.replay import simulate


def test_ordinal_by_rank_categorical_one_hot_constants_dropped():
    space = Space([Param("a", (4, 1, 2)), Param("k", (7,)), Param("d", ("x", "y", "z"))], [])
    x = encode(space)
    assert x.shape == (9, 4)  # one rank column for a, none for k, three for d
    cols = space.columns()
    ranks = {1: 0.0, 2: 0.5, 4: 1.0}  # by value, not by the order listed
    assert x[:, 0].tolist() == [ranks[v] for v in cols["a"]]
    onehot = x[:, 1:] * math.sqrt(2.0)
    assert np.array_equal(onehot.sum(1), np.ones(9))
    for i, v in enumerate(cols["d"]):
        assert onehot[i, ("x", "y", "z").index(v)] == 1.0
    # two categories are exactly as far apart as an ordinal parameter's two ends
    assert np.sum((x[0, 1:] - x[1, 1:]) ** 2) == pytest.approx(1.0)


def test_the_start_grows_with_the_space_within_bounds():
    assert start_size(5, 1.5) == 5
    assert start_size(100, 1.5) == 8
    assert start_size(17_956, 1.5) == 17
    assert start_size(17_956, 3.0) == 32
    assert start_size(10**9, 1.5) == 32
    with pytest.raises(ValueError, match="scale"):
        MixedBayes(DATA.space, 0, scale=0)


def test_the_start_is_a_latin_hypercube_over_the_values():
    space = Space([Param("p", tuple(range(33))), Param("q", tuple(range(17)))], [])
    for seed in range(3):
        strategy = MixedBayes(space, seed)
        assert strategy.initial == 8
        start = []
        for _ in range(strategy.initial):
            i = strategy.ask()
            assert i is not None
            strategy.tell(i, 1.0 + i)
            start.append(i)
        strata = np.minimum(space.positions()[start] * 8 // np.array([32, 16]), 7)
        # one point per eighth of each parameter's values (a random start leaves ~3 of 8 empty)
        for dim in range(2):
            assert len(set(strata[:, dim].tolist())) == 8


def test_failures_decided_by_one_parameter_are_learned():
    space = Space([Param(n, (1, 2, 4, 8, 16, 32)) for n in "abc"], [])
    cols = space.columns()
    strategy = MixedBayes(space, 0)
    rng = np.random.default_rng(1)
    for i in rng.choice(len(space), size=60, replace=False):
        strategy.tell(int(i), None if cols["a"][i] >= 16 else 1.0 + float(cols["b"][i]))
    untold = np.array([i for i in range(len(space)) if i not in strategy.told])
    chance = strategy._success(untold)
    fails = cols["a"][untold] >= 16
    assert chance[fails].mean() < 0.2 < 0.8 < chance[~fails].mean()


def test_it_finds_the_optimum_of_the_synthetic_landscape():
    trace = simulate(DATA, STRATEGIES["bayes_mixed"], 40, seed=0)
    assert trace[-1] == pytest.approx(DATA.optimum)
