"""Every strategy against the same contract, on a small space with a known landscape."""

import re

import numpy as np
import pytest

from perfport._core import MissingExtra, Param, PerfportError
from perfport.space import Constraint, Space
from perfport.strategies import DEFAULT_STRATEGY, STRATEGIES
from perfport.tune.replay import ReplayData, replay, simulate

PARAMS = [
    Param("a", (1, 2, 4, 8, 16, 32)),
    Param("b", (1, 2, 4, 8, 16)),
    Param("c", (0, 1, 2)),
    Param("d", ("x", "y")),
]
SPACE = Space(PARAMS, [Constraint.of("a * b <= 128"), Constraint.of("not (c == 2 and d == 'y')")])


def landscape(space: Space) -> np.ndarray:
    """Smooth in log2 of a and b (optimum a=8, b=4, c=1, d='x'), with a failing corner."""
    cols = space.columns()
    t = (
        1.0
        + (np.log2(cols["a"]) - 3) ** 2
        + 0.5 * (np.log2(cols["b"]) - 2) ** 2
        + 0.3 * (cols["c"] != 1)
    )
    t = t + 0.2 * (cols["d"] == "y")
    t[(cols["a"] >= 16) & (cols["b"] >= 4)] = np.nan  # "refused": the search must live with it
    return t


DATA = ReplayData("synthetic", SPACE, landscape(SPACE))


def _missing(name: str) -> str | None:
    """What keeps a strategy from being built here (an optional package), or None."""
    try:
        STRATEGIES[name](SPACE, 0)
    except MissingExtra as exc:
        return str(exc)
    return None


# A strategy whose optional package is not installed (optuna_gp needs torch) is skipped, with
# the reason; CI installs the test extra, which has optuna.
NAMES = [
    pytest.param(n, marks=pytest.mark.skipif(bool(why := _missing(n)), reason=why or ""))
    for n in sorted(STRATEGIES)
]


@pytest.mark.parametrize("name", NAMES)
def test_contract(name):
    strategy = STRATEGIES[name](SPACE, 3)
    strategy.tell(0, 5.0)  # an observation it did not ask for (like the default configuration)
    asked = []
    for _ in range(len(SPACE) + 5):
        i = strategy.ask()
        if i is None:
            break
        assert 0 <= i < len(SPACE) and i not in strategy.told, (
            f"{name} asked a told or illegal index"
        )
        asked.append(i)
        t = DATA.times[i]
        strategy.tell(i, None if np.isnan(t) else float(t))
    assert len(asked) == len(set(asked))
    assert len(asked) >= min(40, len(SPACE) - 1), f"{name} stopped after {len(asked)}"


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_given_seed(name):
    first = simulate(DATA, STRATEGIES[name], 25, seed=7)
    again = simulate(DATA, STRATEGIES[name], 25, seed=7)
    assert np.array_equal(first, again)


@pytest.mark.parametrize(
    "name",
    [
        *("local_search", "annealing", "bayes_opt", "bayes_tr", "bayes_rf", "portfolio"),
        DEFAULT_STRATEGY,
        *("optuna_tpe", "optuna_cmaes"),
    ],
)
def test_model_and_walkers_beat_random(name):
    ours = replay(DATA, name, budget=20, repeats=12).mean_best_fraction
    chance = replay(DATA, "random", budget=20, repeats=12).mean_best_fraction
    assert ours > chance, (name, ours, chance)


def test_brute_force_finds_the_optimum():
    result = replay(DATA, "brute_force", budget=len(SPACE), repeats=1)
    assert result.mean_best_fraction == 1.0 and result.median_evals_to_95 is not None


def test_prior_scores_lead():
    times = DATA.times
    scores = -np.nan_to_num(times, nan=1e9)  # a perfect prior
    strategy = STRATEGIES["prior"](SPACE, 0, scores=scores)
    assert strategy.ask() == int(np.nanargmin(times))
    with pytest.raises(ValueError, match="configurations"):
        STRATEGIES["prior"](SPACE, 0, scores=[1.0, 2.0])


def test_prior_without_scores_is_bayes_sweep():
    plain = simulate(DATA, STRATEGIES["bayes_sweep"], 60, seed=4)
    assert np.array_equal(simulate(DATA, STRATEGIES["prior"], 60, seed=4), plain)


def test_prior_picks_are_spread_and_skip_the_unknown():
    pos = SPACE.positions()
    best = 0
    near = next(i for i in range(len(SPACE)) if np.count_nonzero(pos[i] != pos[best]) == 1)
    far = next(i for i in range(len(SPACE)) if np.count_nonzero(pos[i] != pos[best]) >= 2)
    scores = np.full(len(SPACE), np.nan)  # NaN: unknown to the prior, never a first pick
    scores[[best, near, far]] = [0.9, 0.8, 0.5]
    strategy = STRATEGIES["prior"](SPACE, 0, scores=scores)
    first = []
    for _ in range(3):
        i = strategy.ask()
        first.append(i)
        strategy.tell(i, 1.0)
    # near is one parameter away from best: skipped; then Bayesian optimisation takes over
    assert first[:2] == [best, far] and first[2] not in (best, far)


def test_prior_rescored_mid_search_takes_new_picks_but_never_a_told_one():
    """Other devices' results landing mid-search: picks not made yet follow the new scores,
    a configuration already told is never asked again, and after ``first`` picks it stops."""
    strategy = STRATEGIES["prior"](SPACE, 0, first=2)  # no prior yet: bayes_rf asks
    told = strategy.ask()
    strategy.tell(told, 1.0)
    scores = np.full(len(SPACE), np.nan)
    other = next(i for i in range(len(SPACE)) if i != told)
    scores[[told, other]] = [1.0, 0.5]  # the told one scores best: it is skipped
    strategy.rescore(scores)
    assert strategy.ask() == other
    strategy.tell(other, 1.0)
    later = np.full(len(SPACE), np.nan)
    pos = SPACE.positions()  # a new pick is spread from the picks made too
    last = next(
        i
        for i in range(len(SPACE))
        if i not in (told, other) and np.count_nonzero(pos[i] != pos[other]) >= 2
    )
    later[last] = 1.0
    strategy.rescore(later)
    assert strategy.ask() == last  # the second of the two prior picks
    strategy.tell(last, 1.0)
    strategy.rescore(np.where(np.arange(len(SPACE)) == 0, 1.0, np.nan))
    assert len(strategy._ranking) == 2  # both picks made: new scores change nothing


def test_prior_refreshed_with_the_same_scores_picks_the_same_spread_configurations():
    scores = -np.nan_to_num(DATA.times, nan=1e9)
    plain = STRATEGIES["prior"](SPACE, 0, scores=scores)
    live = STRATEGIES["prior"](SPACE, 0, scores=scores)
    asked = []
    for _ in range(len(plain._ranking)):
        live.rescore(scores)
        i = live.ask()
        asked.append(i)
        live.tell(i, float(np.nan_to_num(DATA.times[i], nan=1.0)))
    assert asked == plain._ranking
    pos = SPACE.positions()
    assert all(np.count_nonzero(pos[a] != pos[b]) >= 2 for a in asked for b in asked if a != b)


@pytest.mark.parametrize("name", NAMES)
def test_a_plan_is_what_the_strategy_asks_in_order(name):
    """plan() (for compiling builds ahead) lists exactly the asks to come, less what was told."""
    strategy = STRATEGIES[name](SPACE, 5)
    plan = strategy.plan()
    if plan is None:
        assert name not in ("brute_force", "random", "grid")
        return
    strategy.tell(plan[3], 1.0)
    asked = []
    while (i := strategy.ask()) is not None:
        asked.append(i)
        strategy.tell(i, 1.0)
    assert asked == [i for i in plan if i != plan[3]] and sorted(plan) == list(range(len(SPACE)))


def test_listed_plans_its_list():
    from perfport.strategies import Listed

    strategy = Listed(SPACE, 0, (7, 2, 9))
    assert list(strategy.plan()) == [7, 2, 9]
    assert [strategy.ask(), strategy.tell(7, 1.0), strategy.ask()] == [7, None, 2]


def test_prior_whose_picks_fail_here_is_dropped_after_give_up():
    failing = np.flatnonzero(np.isnan(DATA.times))
    running = np.flatnonzero(np.isfinite(DATA.times))
    scores = np.full(len(SPACE), np.nan)
    # the relatives' best 6 fail on this device (spread: no two differ in one parameter only)
    pos = SPACE.positions()
    picks: list[int] = []
    for i in failing:
        if all(np.count_nonzero(pos[i] != pos[j]) >= 2 for j in picks):
            picks.append(int(i))
    scores[picks] = 1.0
    scores[running[:5]] = 0.5
    assert len(picks) > 3
    for give_up, wasted in ((2, 2), (3, 3), (10, len(picks))):
        # live: the same prior refreshed before every ask (tune_many's LivePrior) changes nothing
        for live in (False, True):
            strategy = STRATEGIES["prior"](SPACE, 0, scores=scores, give_up=give_up)
            asked = []
            for _ in range(len(picks) + 4):
                if live:
                    strategy.rescore(scores)
                i = strategy.ask()
                asked.append(i)
                strategy.tell(i, None if np.isnan(DATA.times[i]) else float(DATA.times[i]))
            # after give_up failures in a row the search is bayes_sweep's: no more prior picks
            assert sum(i in picks for i in asked) == wasted
    with pytest.raises(ValueError, match="give_up"):
        STRATEGIES["prior"](SPACE, 0, scores=scores, give_up=0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("index", "value", "says"),
    [
        (len(SPACE), 1.0, "outside the space's 0-"),
        (-1, 1.0, "outside the space's 0-"),
        (1.0, 1.0, "pass the int that ask() returned"),
        (0, float("nan"), "pass a positive finite time"),
        (0, 0.0, "pass a positive finite time"),
        (0, "1.0", "pass a positive finite time"),
    ],
)
def test_a_bad_tell_is_named_and_changes_nothing(name, index, value, says):
    strategy = STRATEGIES[name](SPACE, 3)
    with pytest.raises(PerfportError, match=re.escape(says)):
        strategy.tell(index, value)
    assert strategy.told == {}
    strategy.tell(np.int64(2), 3.5)  # numpy's ints are ints
    assert strategy.told == {2: 3.5}
