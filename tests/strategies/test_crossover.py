"""bayes_cross: the forest's candidates widened by legal crossover offspring of its best."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, CrossoverBayes
from perfport.tune.replay import simulate


def _told(strategy: CrossoverBayes, count: int) -> list[int]:
    """Tell ``count`` configurations of the synthetic space, in a fixed random order."""
    told = []
    for i in np.random.default_rng(1).permutation(len(SPACE)).tolist():
        t = DATA.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
        told.append(i)
        if len(told) == count:
            break
    return told


def test_offspring_are_legal_untold_and_bred_from_the_elite():
    strategy = CrossoverBayes(SPACE, 0, elite=4, children=200, mutation=0.0)
    _told(strategy, 20)
    ranked = sorted((v, i) for i, v in strategy.told.items() if v is not None)[:4]
    parents = strategy.geometry.pos[[i for _, i in ranked]]
    kids = strategy.offspring()
    assert len(kids) > 0
    for k in kids.tolist():
        assert 0 <= k < len(SPACE) and k not in strategy.told
        # Without mutation, every parameter's value is one of the elite's.
        row = strategy.geometry.pos[k]
        assert all(row[d] in parents[:, d] for d in range(parents.shape[1]))


def test_mutation_moves_one_parameter_at_most_one_step_off_the_elite():
    strategy = CrossoverBayes(SPACE, 0, elite=3, children=300, mutation=1.0)
    _told(strategy, 20)
    ranked = sorted((v, i) for i, v in strategy.told.items() if v is not None)[:3]
    parents = strategy.geometry.pos[[i for _, i in ranked]]
    for k in strategy.offspring().tolist():
        row = strategy.geometry.pos[k]
        off = [min(abs(row[d] - parents[:, d])) for d in range(parents.shape[1])]
        assert sum(1 for o in off if o > 0) <= 1 and max(off) <= 1


def test_offspring_join_the_candidates():
    strategy = CrossoverBayes(SPACE, 0, max_candidates=5)
    _told(strategy, 20)
    untold = np.array([i for i in range(len(SPACE)) if i not in strategy.told])
    kids = copy.deepcopy(strategy).offspring()  # the same breeding draws as the next call
    assert len(kids) > 0
    candidates = set(strategy._candidates(untold).tolist())
    assert set(kids.tolist()) <= candidates and len(candidates) > 5


def test_registered_and_reaches_the_optimum_of_the_synthetic_space():
    trace = simulate(DATA, STRATEGIES["bayes_cross"], 40, seed=0)
    assert np.nanmin(trace) == np.nanmin(DATA.times)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="elite"):
        CrossoverBayes(SPACE, 0, elite=1)
    with pytest.raises(ValueError, match="mutation"):
        CrossoverBayes(SPACE, 0, mutation=1.5)
