"""bayes_alt: the forest and the Gaussian process take turns, both fitted to every tell."""

from __future__ import annotations

import numpy as np
import pytest
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


def test_with_stall_the_gp_waits_for_a_stuck_forest():
    strategy = AlternatingBayes(SPACE, 0, stall=3)
    best = int(np.nanargmin(DATA.times))
    strategy.tell(best, 1.0)  # the best first: nothing told after it improves
    others = [i for i in range(len(SPACE)) if i != best]
    for i in others[: strategy.initial - 1]:
        strategy.tell(i, 10.0)  # the start: misses here do not count
    assert strategy._misses == 0
    seen = []
    for i in others[strategy.initial - 1 : strategy.initial + 5]:
        strategy.ask()
        seen.append((strategy._misses, len(strategy.told) % 2, strategy.surrogate))
        strategy.tell(i, 10.0)
    assert all(s == "rf" for m, _, s in seen if m < 3)
    assert all(s == ("gp" if odd else "rf") for m, odd, s in seen if m >= 3)
    assert any(s == "gp" for _, _, s in seen)
    strategy.tell(others[-1], 0.5)  # a gain: the forest alone again
    strategy.ask()
    assert strategy._misses == 0 and strategy.surrogate == "rf"


def test_a_negative_stall_is_refused():
    with pytest.raises(ValueError, match="stall"):
        AlternatingBayes(SPACE, 0, stall=-1)
