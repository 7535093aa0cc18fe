"""bayes_ts: bayes_rf, and after a stall Thompson sampling over the forest's trees."""

from __future__ import annotations

import numpy as np
import pytest
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, BayesRandomForest, ThompsonBayes
from perfport.strategies.surrogates import RandomForest
from perfport.tune.replay import replay, simulate

# Told in this order: the best first, so nothing told after it is a gain.
ORDER = [int(i) for i in np.argsort(np.where(np.isnan(DATA.times), np.inf, DATA.times))]
RUNS = [i for i in ORDER if not np.isnan(DATA.times[i])]


def _tell(strategy: BayesRandomForest, indices: list[int]) -> None:
    for i in indices:
        strategy.tell(i, float(DATA.times[i]))


def test_a_forest_that_never_stalls_is_bayes_rf():
    never = simulate(DATA, lambda space, seed: ThompsonBayes(space, seed, stall=10_000), 40, 2)
    assert np.array_equal(never, simulate(DATA, STRATEGIES["bayes_rf"], 40, seed=2))


def test_a_stall_switches_to_one_trees_fastest_candidate_until_a_gain():
    strategy, plain = ThompsonBayes(SPACE, 0, stall=3), BayesRandomForest(SPACE, 0)
    start = RUNS[: strategy.initial]  # the start: its misses do not count
    _tell(strategy, start)
    _tell(plain, start)
    picks = []
    for step, i in enumerate(RUNS[strategy.initial : strategy.initial + 8]):
        assert strategy.stuck == (step >= 3)
        if strategy.stuck:
            pick = strategy.ask()
            assert pick is not None and pick not in strategy.told
            ok = [j for j, v in strategy.told.items() if v is not None]
            x, y = strategy.features, np.log([strategy.told[j] for j in ok])
            forest = RandomForest(seed=len(strategy.told)).fit(x[ok], y)
            untold = strategy._untold()
            trees = forest.predict_trees(x[untold])
            # The tree drawn for this ask (seeded by the count of tells) rates the pick the
            # fastest untold configuration; nothing failed, so every candidate may be drawn.
            drawn = np.random.default_rng([0, 2, len(strategy.told)]).choice(forest.trees, 1)
            row = trees[drawn[0]]
            assert row[list(untold).index(pick)] == row.min()
            picks.append((pick, plain.ask()))
        _tell(strategy, [i])
        _tell(plain, [i])
    assert any(ours != ei for ours, ei in picks)  # not expected improvement's choice
    strategy.tell(RUNS[-1], 0.1)  # a gain: expected improvement again
    plain.tell(RUNS[-1], 0.1)
    assert not strategy.stuck and strategy.ask() == plain.ask()


def test_it_beats_random_on_the_synthetic_space():
    ours = replay(DATA, "bayes_ts", budget=20, repeats=12).mean_best_fraction
    chance = replay(DATA, "random", budget=20, repeats=12).mean_best_fraction
    assert ours > chance


@pytest.mark.parametrize("bad", [{"stall": 0}, {"draw": 0}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError, match="stall and draw"):
        ThompsonBayes(SPACE, 0, **bad)
