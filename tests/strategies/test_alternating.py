"""bayes_alt: the forest and the Gaussian process take turns, both fitted to every tell."""

from __future__ import annotations

import numpy as np
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, AlternatingBayes
from perfport.tune.replay import replay, simulate


def test_the_surrogate_follows_the_count_of_tells():
    strategy = AlternatingBayes(SPACE, 0)
    used = []
    for _ in range(strategy.initial + 6):
        i = strategy.ask()
        assert i is not None
        used.append((len(strategy.told), strategy.surrogate))
        t = DATA.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
    after_start = [(n, s) for n, s in used if n >= strategy.initial]
    assert after_start and all(s == ("gp" if n % 2 else "rf") for n, s in after_start)


def test_it_is_neither_model_alone():
    alt = simulate(DATA, STRATEGIES["bayes_alt"], 30, seed=1)
    assert not np.array_equal(alt, simulate(DATA, STRATEGIES["bayes_rf"], 30, seed=1))
    assert not np.array_equal(alt, simulate(DATA, STRATEGIES["bayes_opt"], 30, seed=1))


def test_it_beats_random_on_the_synthetic_space():
    ours = replay(DATA, "bayes_alt", budget=20, repeats=12).mean_best_fraction
    chance = replay(DATA, "random", budget=20, repeats=12).mean_best_fraction
    assert ours > chance
