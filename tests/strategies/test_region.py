"""The prior's region: after the prior's picks, the forest inside the prior's best fraction of
the space, with every few evaluations outside it; the region dropped once outside does better.
``prior`` (the default) continues with bayes_sweep, ``prior_region`` with bayes_rf."""

import numpy as np
import pytest
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, PriorRegion
from perfport.strategies.region import RegionForest, RegionSweep, top_region
from perfport.tune.replay import simulate

PERFECT = -np.nan_to_num(DATA.times, nan=1e9)  # the relatives rank this device exactly
REVERSED = np.nan_to_num(DATA.times, nan=-1.0)  # they rate the slowest best


def _run(strategy: PriorRegion, steps: int) -> list[int]:
    asked = []
    for _ in range(steps):
        i = strategy.ask()
        assert i is not None and i not in strategy.told
        asked.append(i)
        t = DATA.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
    return asked


def test_without_scores_it_is_bayes_rf():
    plain = simulate(DATA, STRATEGIES["bayes_rf"], 25, seed=2)
    assert np.array_equal(simulate(DATA, STRATEGIES["prior_region"], 25, seed=2), plain)


def test_the_default_prior_keeps_to_the_region_and_without_one_is_the_plain_prior():
    strategy = STRATEGIES["prior"](SPACE, 0, scores=PERFECT, first=2)
    assert strategy.region == 0.15 and isinstance(strategy._then, RegionSweep)
    inside = top_region(PERFECT, 0.15)
    asked = _run(strategy, 10)
    assert [bool(inside[i]) for i in asked[2:10]] == [True, True, True, False] * 2
    unlimited = STRATEGIES["prior"](SPACE, 0, scores=PERFECT, first=2, region=0)
    _run(unlimited, 10)
    assert unlimited._inside is None and unlimited._then.allowed is None


def test_with_stall_the_region_forest_sweeps_outside_the_region():
    """Once stuck, the climb from the incumbent reaches one-parameter changes the region
    leaves out; the forest's own picks keep to it."""
    ran = np.flatnonzero(np.isfinite(DATA.times))[:12]
    best = int(ran[np.argmin(DATA.times[ran])])
    for forest in (RegionSweep(SPACE, 0, stall=1), RegionForest(SPACE, 0)):
        forest.allowed = np.zeros(len(SPACE), dtype=bool)
        forest.allowed[ran] = True
        near = set(forest.geometry.exchanges(best))
        far = [i for i in range(len(SPACE)) if i not in near and i not in ran][-2:]
        forest.allowed[far] = True  # the region's only untold configurations
        for i in ran:
            forest.tell(int(i), float(DATA.times[i]))
        pick = forest.ask()
        assert pick is not None
        if isinstance(forest, RegionSweep):
            assert pick in forest.geometry.exchanges(best) and not forest.allowed[pick]
        else:
            assert forest.allowed[pick]


def test_top_region_keeps_the_best_fraction_of_the_known():
    region = top_region([0.1, np.nan, 0.9, 0.5, 0.7, 0.3, 0.2, 0.8, 0.6, 0.4, 1.0], 0.3)
    assert np.flatnonzero(region).tolist() == [2, 7, 10]
    assert not top_region([np.nan, np.nan], 0.5).any()


def test_after_the_picks_the_forest_searches_the_region_and_every_fourth_outside():
    strategy = PriorRegion(SPACE, 0, scores=PERFECT, first=2, region=0.3)
    inside = top_region(PERFECT, 0.3)
    asked = _run(strategy, 14)
    assert asked[:2] == strategy._ranking
    # a right prior: the region holds the optimum and is never dropped
    assert [bool(inside[i]) for i in asked[2:14]] == [True, True, True, False] * 3
    assert strategy._inside is not None


def test_a_misleading_region_is_dropped_once_outside_does_better():
    strategy = PriorRegion(SPACE, 0, scores=REVERSED, first=2, region=0.3, judge=2)
    asked = _run(strategy, 40)
    assert strategy._inside is None and strategy._then.allowed is None
    inside = top_region(REVERSED, 0.3)
    # dropped after two evaluations outside (turns 4 and 8): by then at most 8 after the picks
    assert sum(not inside[i] for i in asked[:10]) == 2
    assert sum(not inside[i] for i in asked[10:]) > 20  # then the whole space, mostly outside
    trusting = PriorRegion(SPACE, 0, scores=REVERSED, first=2, region=0.3, judge=100)
    kept = _run(trusting, 22)
    assert sum(not inside[i] for i in kept[2:]) == 5  # never dropped: outside on every 4th only


def test_failing_picks_drop_the_region_with_the_picks():
    scores = np.where(np.isnan(DATA.times), 1.0, 0.1)  # the relatives' best all fail here
    strategy = PriorRegion(SPACE, 0, scores=scores, give_up=2, judge=100)
    _run(strategy, 3)
    assert len(strategy._ranking) == 2 and strategy._inside is None
    assert strategy._then.allowed is None


def test_an_exhausted_region_opens_the_whole_space_and_bad_settings_are_refused():
    forest = RegionForest(SPACE, 0)
    forest.allowed = np.zeros(len(SPACE), dtype=bool)
    forest.allowed[3] = True
    forest.tell(3, 1.0)
    assert forest.ask() is not None  # no untold configuration inside: any untold one
    for bad in ({"region": -0.1}, {"region": 1.5}, {"outside_every": -1}, {"judge": 0}):
        with pytest.raises(ValueError, match="region in"):
            PriorRegion(SPACE, 0, **bad)
    with pytest.raises(ValueError, match="stall >= 0"):
        STRATEGIES["prior"](SPACE, 0, stall=-1)
