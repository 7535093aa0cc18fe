"""A strategy class of the user's own goes where a strategy's name does."""

from __future__ import annotations

import pytest

from perfport._core import PerfportError
from perfport.strategies import STRATEGIES, Strategy, strategy_class


class Mine(Strategy):
    name = "mine"
    summary = "the first configuration only"

    def ask(self) -> int | None:
        return None if self.told else 0


class Clash(Mine):
    name = "random"


class Nameless(Strategy):
    summary = ""

    def ask(self) -> int | None:
        return None


def test_a_strategy_class_of_ones_own_is_taken_as_given():
    assert strategy_class(Mine) is Mine and strategy_class("random") is STRATEGIES["random"]


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (Clash, "as one of perfport's"),  # its campaigns would resume perfport's random's
        (Nameless, "needs a name"),
        (dict, "not a search strategy"),
    ],
)
def test_a_strategy_class_that_cannot_key_its_campaigns_is_refused(cls, message):
    with pytest.raises(PerfportError, match=message):
        strategy_class(cls)


class Answers(Strategy):
    """Asks whatever it is set to answer."""

    name, summary = "answers", "asks what it is given"
    answer: object = None

    def ask(self) -> int | None:
        return self.answer  # type: ignore[return-value]


def _space():
    from perfport._core import Param
    from perfport.space import Space

    return Space([Param("a", (1, 2, 3, 4))])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (9, r"strategy answers asked for configuration 9, outside the space's 0-3: ask\(\)"),
        (-1, "asked for configuration -1, outside"),
        ("3", r"ask\(\) returned '3' \(str\); return the int number"),
        (2.0, r"ask\(\) returned 2.0 \(float\)"),
        (True, r"ask\(\) returned True \(bool\)"),
        (1, r"ask\(\) returned configuration 1, which it was already told \(1 of 4 told\)"),
    ],
)
def test_a_bad_answer_of_ask_is_one_line_naming_the_strategy(answer, message):
    """A str gave a raw TypeError, a float numpy's IndexError, and a told configuration ended
    the campaign as complete, silently, with untold ones left."""
    from perfport.strategies import StrategyError, checked_ask

    strategy = Answers(_space())
    strategy.tell(1, 1.0)
    strategy.answer = answer
    with pytest.raises(StrategyError, match=message):
        checked_ask(strategy)


def test_ask_answers_that_are_kept():
    import numpy as np

    from perfport.strategies import checked_ask

    strategy = Answers(_space())
    strategy.answer = np.int64(2)
    assert checked_ask(strategy) == 2 and type(checked_ask(strategy)) is int
    for i in range(4):
        strategy.tell(i, 1.0)
    strategy.answer = 0  # every configuration told: asking again ends the search
    assert checked_ask(strategy) is None


def test_a_plan_outside_the_space_is_named():
    from perfport.strategies import StrategyError, checked_plan

    class Planned(Mine):
        name = "planned"

        def plan(self):
            return [0, 0, 99]

    with pytest.raises(StrategyError, match=r"strategy planned: plan\(\) holds 99, not"):
        checked_plan(Planned(_space()))


@pytest.mark.parametrize(
    ("plan", "shown"),
    [([[0], [1]], r"\[0\]"), ([[0], [1, 2]], r"\[0\]"), ([0, "1"], "'1'"), ([0, None], "None")],
)
def test_a_plan_of_other_items_names_the_item(plan, shown):
    """[[0], [1]] was reported as holding 0, a configuration number; items of unequal lengths
    were numpy's raw ValueError."""
    from perfport.strategies import StrategyError, checked_plan

    class Planned(Mine):
        name = "planned"

        def plan(self):
            return plan

    with pytest.raises(StrategyError, match=rf"strategy planned: plan\(\) holds {shown}, not"):
        checked_plan(Planned(_space()))


class NoAsk(Strategy):
    name, summary = "no_ask", ""


class ExtraArg(Mine):
    name = "extra_arg"

    def __init__(self, space, seed, mode):
        super().__init__(space, seed)


class NoSuper(Mine):
    name = "no_super"

    def __init__(self, space, seed=0):
        self.space = space


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (NoAsk, "strategy no_ask cannot be built: TypeError: Can't instantiate abstract class"),
        (ExtraArg, r"strategy extra_arg cannot be built: TypeError: .*'mode'; its class must"),
        (NoSuper, r"strategy no_super: its __init__ does not call super\(\).__init__"),
    ],
)
def test_a_class_that_cannot_be_built_is_one_line(cls, message):
    from perfport.strategies import StrategyError, make_strategy

    with pytest.raises(StrategyError, match=message):
        make_strategy(cls, _space(), 0)


def test_an_instance_is_refused_naming_the_class():
    """It said 'no strategy <__main__.Mine object at 0x...>; choose one of ...'."""
    with pytest.raises(PerfportError, match=r"instance of Mine; pass the class \(strategy=Mine\)"):
        strategy_class(Mine(_space()))  # type: ignore[arg-type]
