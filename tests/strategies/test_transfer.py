"""prior_transfer: the prior as a feature of the forest, interleaved picks, a misleading prior
dropped early."""

import numpy as np
import pytest
from test_conformance import DATA, SPACE

from perfport.strategies import STRATEGIES, TransferPrior
from perfport.strategies.transfer import prior_rank
from perfport.tune.replay import simulate


def _run(strategy: TransferPrior, steps: int) -> list[int]:
    asked = []
    for _ in range(steps):
        i = strategy.ask()
        assert i is not None and i not in strategy.told
        asked.append(i)
        t = DATA.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
    return asked


def _spread_picks(scores: np.ndarray) -> list[int]:
    return TransferPrior(SPACE, 0, scores=scores)._ranking


def test_without_scores_it_is_bayes_rf():
    plain = simulate(DATA, STRATEGIES["bayes_rf"], 25, seed=2)
    assert np.array_equal(simulate(DATA, STRATEGIES["prior_transfer"], 25, seed=2), plain)


def test_prior_rank_scales_known_scores_and_zeroes_the_unknown():
    rank = prior_rank([0.2, np.nan, 0.9, 0.5])
    assert rank.tolist() == pytest.approx([1 / 3, 0.0, 1.0, 2 / 3])
    assert prior_rank([np.nan, np.nan]).tolist() == [0.0, 0.0]


def test_the_forest_sees_the_prior_as_a_feature():
    scores = -np.nan_to_num(DATA.times, nan=1e9)
    strategy = TransferPrior(SPACE, 0, scores=scores)
    features = strategy._then.features
    assert features.shape == (len(SPACE), SPACE.positions().shape[1] + 1)
    assert np.array_equal(features[:, -1], prior_rank(scores))
    without = TransferPrior(SPACE, 0, scores=scores, feature=False)._then.features
    assert without.shape == (len(SPACE), SPACE.positions().shape[1])


def test_a_good_prior_is_followed_with_the_forests_own_picks_between():
    scores = -np.nan_to_num(DATA.times, nan=1e9)  # a perfect prior
    strategy = TransferPrior(SPACE, 0, scores=scores, first=4)
    picks = list(strategy._ranking)
    asked = _run(strategy, 8)
    assert asked[0] == int(np.nanargmin(DATA.times))
    assert [i in picks for i in asked[:8]] == [True, False] * 4  # every pick, one in two
    plain = TransferPrior(SPACE, 0, scores=scores, first=4, own_every=0)
    assert _run(plain, 4) == picks  # own_every=0: the picks back to back, as in prior


def test_a_misleading_prior_is_dropped_once_the_forest_does_better():
    worst_first = np.nan_to_num(DATA.times, nan=-1.0)  # the relatives rate the slowest best
    picks = _spread_picks(worst_first)
    assert len(picks) == 10
    strategy = TransferPrior(SPACE, 0, scores=worst_first, judge=2)
    _run(strategy, 30)
    # a few picks, until two of the forest's own have run and beaten them; then no more
    assert len(strategy._ranking) <= 3
    trusting = _run(TransferPrior(SPACE, 0, scores=worst_first, judge=30), 30)
    assert sum(i in picks for i in trusting) == 10


def test_failing_picks_still_drop_the_prior_and_bad_settings_are_refused():
    scores = np.where(np.isnan(DATA.times), 1.0, 0.1)  # the relatives' best all fail here
    picks = _spread_picks(scores)
    strategy = TransferPrior(SPACE, 0, scores=scores, give_up=2, judge=30)
    asked = _run(strategy, 20)
    assert len(picks) > 2 and strategy._ranking == picks[:2]  # followed no further
    assert asked[0] == picks[0] and asked[2] == picks[1]
    with pytest.raises(ValueError, match="own_every"):
        TransferPrior(SPACE, 0, own_every=-1)
    with pytest.raises(ValueError, match="judge"):
        TransferPrior(SPACE, 0, judge=0)
