"""bayes_sweep: bayes_rf, and after a stall a hill climb over one-parameter changes."""

from __future__ import annotations

import numpy as np
import pytest
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, BayesRandomForest, SweepBayes
from perfport.tune.replay import replay, simulate

# From the median configuration to the slowest: nothing told after the first is a gain, and
# the first has faster neighbours.
ORDER = [int(i) for i in np.argsort(np.where(np.isnan(DATA.times), np.inf, DATA.times))]
RUNS = [i for i in ORDER if not np.isnan(DATA.times[i])][len(ORDER) // 3 :]


def _tell(strategy: SweepBayes, indices: list[int]) -> None:
    for i in indices:
        strategy.tell(i, float(DATA.times[i]))


def test_a_forest_that_never_stalls_is_bayes_rf():
    never = simulate(DATA, lambda space, seed: SweepBayes(space, seed, stall=10_000), 40, 2)
    assert np.array_equal(never, simulate(DATA, STRATEGIES["bayes_rf"], 40, seed=2))


def test_neighbours_are_every_legal_one_parameter_change():
    strategy = SweepBayes(SPACE, 0)
    pos = strategy.geometry.pos
    for centre in (0, len(SPACE) // 2, len(SPACE) - 1):
        found = set(strategy.geometry.exchanges(centre))
        expected = {j for j in range(len(SPACE)) if (pos[j] != pos[centre]).sum() == 1}
        assert found == expected and expected


def _stalled(stall: int = 3) -> tuple[SweepBayes, BayesRandomForest, tuple[int, float]]:
    """A sweep strategy and bayes_rf told the same start and ``stall`` misses after it."""
    strategy, plain = SweepBayes(SPACE, 0, stall=stall), BayesRandomForest(SPACE, 0)
    slow = RUNS[: strategy.initial + stall]
    _tell(strategy, slow)
    _tell(plain, slow)
    assert strategy.best is not None
    return strategy, plain, strategy.best


def test_a_stall_sweeps_the_incumbent_then_returns_to_expected_improvement():
    strategy, plain, (centre, value) = _stalled()
    before, swept = set(strategy.told), []
    while (pick := strategy.ask()) in strategy.geometry.exchanges(centre) and pick not in swept:
        swept.append(pick)
        strategy.tell(pick, value * 1.5)  # no gain: the sweep goes on
        plain.tell(pick, value * 1.5)
    assert set(swept) == set(strategy.geometry.exchanges(centre)) - before
    # The neighbourhood used up: the next ask is expected improvement's, as bayes_rf's.
    assert pick == plain.ask()


def test_a_gain_during_a_sweep_moves_it_to_the_new_incumbent():
    strategy, _, (centre, value) = _stalled()
    first = strategy.ask()
    assert first is not None and first in strategy.geometry.exchanges(centre)
    strategy.tell(first, value * 0.5)
    assert strategy.ask() in strategy.geometry.exchanges(first)


def test_it_beats_random_on_the_synthetic_space():
    ours = replay(DATA, "bayes_sweep", budget=20, repeats=12).mean_best_fraction
    chance = replay(DATA, "random", budget=20, repeats=12).mean_best_fraction
    assert ours > chance


def test_a_bad_stall_is_refused():
    with pytest.raises(ValueError, match="stall must be"):
        SweepBayes(SPACE, 0, stall=0)


def test_prior_with_a_stall_goes_on_as_bayes_sweep():
    def prior(space, seed):
        return STRATEGIES["prior"](space, seed, stall=4)

    def sweep(space, seed):
        return SweepBayes(space, seed, stall=4)

    assert np.array_equal(simulate(DATA, prior, 40, 1), simulate(DATA, sweep, 40, 1))
    assert not np.array_equal(
        simulate(DATA, sweep, 40, 1), simulate(DATA, STRATEGIES["bayes_rf"], 40, 1)
    )
