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
