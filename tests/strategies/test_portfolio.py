"""The cold-start portfolio: global forest search, a box around the incumbent after a stall."""

from __future__ import annotations

import numpy as np
import pytest
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, Portfolio
from perfport.strategies.portfolio import Phase
from perfport.tune.replay import simulate


def test_without_a_stall_it_is_bayes_rf():
    plain = simulate(DATA, STRATEGIES["bayes_rf"], 30, seed=2)
    never = simulate(DATA, lambda s, k: Portfolio(s, k, patience=10_000), 30, seed=2)
    assert np.array_equal(plain, never)


BEST = int(np.nanargmin(DATA.times))
POS = SPACE.positions()
BOX = [i for i in range(len(SPACE)) if i != BEST and np.abs(POS[i] - POS[BEST]).max() <= 1]


def _stalled(patience: int, away: int = 0) -> Portfolio:
    """A portfolio told a best configuration and then ``patience`` worse ones outside its box
    (after the space-filling start, which does not count)."""
    strategy = Portfolio(SPACE, 0, patience=patience, away=away)
    strategy.tell(BEST, 1.0)
    outside = [i for i in range(len(SPACE)) if i != BEST and i not in BOX]
    assert len(outside) >= strategy.initial + patience
    for i in outside[: strategy.initial + patience]:
        strategy.tell(i, 10.0)
    return strategy


def test_a_stall_moves_the_search_into_the_box_around_the_best():
    strategy = _stalled(patience=4)
    assert strategy.phase is Phase.LOCAL
    untold = np.array([i for i in range(len(SPACE)) if i not in strategy.told])
    assert set(strategy._candidates(untold).tolist()) == set(BOX)  # the whole box, only it
    for _ in range(3):
        i = strategy.ask()
        assert i in BOX
        strategy.tell(i, 20.0)


def test_the_local_phase_ends_after_patience_misses_and_when_the_box_is_used_up():
    strategy = _stalled(patience=4)
    for _ in range(4):
        i = strategy.ask()
        assert i is not None
        strategy.tell(i, 20.0)
    assert strategy.phase is Phase.GLOBAL
    strategy = _stalled(patience=len(BOX) + 1)  # the box is told before patience runs out
    assert strategy.phase is Phase.LOCAL
    for i in BOX:
        strategy.tell(i, 20.0)
    i = strategy.ask()
    assert i is not None and i not in BOX and strategy.phase is Phase.GLOBAL


def test_improvement_in_the_box_keeps_it_local():
    strategy = _stalled(patience=4)
    for value in (0.9, 0.8, 0.7, 0.6, 0.5):
        i = strategy.ask()
        assert i is not None
        strategy.tell(i, value)
    assert strategy.phase is Phase.LOCAL


def test_after_a_fruitless_local_phase_it_looks_away_from_the_best():
    strategy = _stalled(patience=4, away=3)
    for _ in range(4):  # a local phase that finds nothing
        i = strategy.ask()
        assert i is not None
        strategy.tell(i, 20.0)
    assert strategy.phase is Phase.GLOBAL
    for _ in range(3):
        i = strategy.ask()
        assert i is not None and np.count_nonzero(POS[i] != POS[BEST]) >= 3
        strategy.tell(i, 20.0)
    i = strategy.ask()
    assert i is not None
    strategy.tell(i, 0.5)  # an improvement: the search may come near the new best again
    assert not strategy._escaping


@pytest.mark.parametrize("bad", [{"patience": 0}, {"radius": 0}, {"away": -1}])
def test_settings_are_checked(bad):
    with pytest.raises(ValueError, match="patience and radius"):
        Portfolio(SPACE, 0, **bad)
