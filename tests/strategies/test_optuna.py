"""Optuna's samplers as perfport strategies: the mapping of the space, the repair of illegal and
repeated suggestions, failures, and the missing-extra error."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from perfport._core import MissingExtra, Param
from perfport.space import Constraint, Space
from perfport.strategies import STRATEGIES
from perfport.strategies.optuna_samplers import OptunaCmaEs, OptunaTPE

optuna = pytest.importorskip("optuna", reason="the optuna extra is not installed")

# Half of the cartesian grid is illegal, so samplers suggest illegal points often.
SPACE = Space(
    [Param("x", (1, 2, 4, 8, 16, 32, 64)), Param("y", (1, 2, 4, 8)), Param("k", ("a", "b"))],
    [Constraint.of("x * y <= 32")],
)


def _times(space: Space) -> np.ndarray:
    cols = space.columns()
    return (1.0 + (np.log2(cols["x"]) - 2) ** 2 + (np.log2(cols["y"]) - 1) ** 2) * np.where(
        cols["k"] == "a", 1.0, 1.5
    )


def test_numbers_are_ordinal_and_words_categorical():
    strategy = OptunaTPE(SPACE, 0)
    dists = strategy._distributions
    assert isinstance(dists["x"], optuna.distributions.IntDistribution)
    assert (dists["x"].low, dists["x"].high) == (0, 6)
    assert isinstance(dists["k"], optuna.distributions.CategoricalDistribution)
    one_value = Space([Param("x", (1, 2)), Param("fixed", (3,))])
    assert set(OptunaTPE(one_value, 0)._distributions) == {"x"}


@pytest.mark.parametrize("cls", [OptunaTPE, OptunaCmaEs])
def test_every_suggestion_is_answered_and_nothing_is_measured_twice(cls):
    strategy = cls(SPACE, 1)
    times = _times(SPACE)
    asked = []
    for _ in range(30):
        i = strategy.ask()
        assert i is not None and 0 <= i < len(SPACE) and i not in strategy.told
        asked.append(i)
        strategy.tell(i, float(times[i]))
    trials = strategy._study.trials
    # One completed trial per measurement: illegal or repeated suggestions were repaired, not
    # dropped, so the sampler learns from each of its own proposals.
    assert len(asked) == len(set(asked)) == len(trials)
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    legal = {tuple(p) for p in strategy.geometry.pos.tolist()}
    repaired = 0
    for trial, i in zip(trials, asked, strict=True):
        assert trial.value == pytest.approx(math.log(times[i]))
        suggested = tuple(int(v) for v in strategy._position(trial.params))
        if suggested != tuple(strategy.geometry.pos[i]):
            repaired += 1
            assert suggested not in legal or SPACE.index(SPACE.config(i)) in asked
    assert repaired > 0, "the test space should make the sampler suggest illegal points"


def test_the_whole_space_then_none():
    small = Space([Param("x", (1, 2, 4)), Param("y", (1, 2))], [Constraint.of("x * y <= 4")])
    strategy = OptunaTPE(small, 0)
    seen = set()
    while (i := strategy.ask()) is not None:
        seen.add(i)
        strategy.tell(i, 1.0 + i)
    assert seen == set(range(len(small)))


def test_failures_are_told_as_worse_than_the_worst():
    strategy = OptunaTPE(SPACE, 0)
    first, second = strategy.ask(), None
    strategy.tell(first, 4.0)
    second = strategy.ask()
    strategy.tell(second, None)  # compile error, refused launch, time-out ...
    values = [t.value for t in strategy._study.trials]
    assert values == pytest.approx([math.log(4.0), math.log(4.0) + math.log(2.0)])


def test_a_failure_before_any_success_waits_for_one():
    # Told at once, it was "log 2 ms" (nothing worse to be worse than), and TPE took it for its
    # best trial wherever kernels run for more than 2 ms.
    strategy = OptunaTPE(SPACE, 0)
    first = strategy.ask()
    strategy.tell(first, None)
    assert [t.state for t in strategy._study.trials] == [optuna.trial.TrialState.RUNNING]
    strategy.tell(7, None)  # a failure it did not ask for waits too
    second = strategy.ask()
    strategy.tell(second, 50.0)
    values = {t.number: t.value for t in strategy._study.trials}
    assert strategy._study.best_trial.value == pytest.approx(math.log(50.0))
    assert sorted(values.values()) == pytest.approx([math.log(50.0)] + 2 * [math.log(100.0)])


@pytest.mark.parametrize("cls", [OptunaTPE, OptunaCmaEs])
def test_a_failure_stays_worse_than_every_success(cls):
    strategy = cls(SPACE, 2)
    rng = np.random.default_rng(2)
    told: dict[int, float | None] = {}
    number = {}  # measured index -> its trial (a repaired suggestion's params are not its own)
    for _ in range(len(SPACE)):  # times spanning 10**6, failures among them, from the start
        i = strategy.ask()
        number[i] = strategy._open[i].number
        told[i] = None if rng.random() < 0.3 else float(10 ** rng.uniform(-3, 3))
        strategy.tell(i, told[i])
    trials = strategy._study.trials
    by_index = {i: trials[n].value for i, n in number.items()}
    times = {i: v for i, v in by_index.items() if told.get(i) is not None}
    failures = [v for i, v in by_index.items() if told.get(i) is None]
    assert failures and max(times.values()) < min(failures)
    ranked = sorted(times, key=lambda i: told[i])  # the study ranks successes as their times
    assert [times[i] for i in ranked] == sorted(times.values())


def test_results_it_did_not_ask_for_join_the_study():
    strategy = OptunaTPE(SPACE, 0)
    strategy.tell(5, 2.0)  # the default configuration, or a resumed campaign's result
    (trial,) = strategy._study.trials
    assert tuple(strategy._position(trial.params)) == tuple(strategy.geometry.pos[5])
    assert trial.value == pytest.approx(math.log(2.0))
    for _ in range(15):
        i = strategy.ask()
        assert i is not None and i != 5
        strategy.tell(i, 1.0)


def test_without_optuna_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna now raises ImportError
    with pytest.raises(MissingExtra, match=r"perfport\[optuna\]"):
        STRATEGIES["optuna_tpe"](SPACE, 0)


@pytest.mark.parametrize(
    ("name", "missing", "extra"),
    [
        ("optuna_qmc", "scipy.stats.qmc", "optuna"),
        ("optuna_cmaes", "cmaes", "optuna"),
        ("optuna_gp", "scipy.optimize", "optuna-gp"),
        ("optuna_gp", "torch", "optuna-gp"),
    ],
)
def test_a_package_the_sampler_imports_later_is_checked_first(monkeypatch, name, missing, extra):
    # Optuna imports these only once it samples (QMC after the first trial, the GP after its
    # start-up trials): unchecked, a campaign failed half-way with a traceback.
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(MissingExtra, match=rf"'{missing.split('.')[0]}'.*perfport\[{extra}\]"):
        STRATEGIES[name].check_available()


def test_each_samplers_extra_installs_what_it_imports():
    import re
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    for name in ("optuna_tpe", "optuna_qmc", "optuna_cmaes", "optuna_gp"):
        for module, extra in STRATEGIES[name].needs:
            names = {re.split(r"[<>=\[;! ]", r, maxsplit=1)[0] for r in extras[extra]}
            assert {"optuna", module.split(".")[0]} <= names, (name, extra)
