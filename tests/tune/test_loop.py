"""The tuning loop's own checks of what a strategy hands it."""

import pytest

from perfport import RunSettings, Timing, tune
from perfport.store import Store
from perfport.strategies import Strategy, StrategyError

FAST = RunSettings(timing=Timing.fixed(2))


class _ListsPlan(Strategy):
    """A fixed order whose items are lists, not configuration numbers."""

    name, summary = "lists_plan", "plans lists"

    def ask(self) -> int | None:
        return None

    def plan(self):
        return [[0], [1]]


def test_a_malformed_plan_is_one_line_before_anything_is_measured(db):
    """The loop counted the plan (set(plan)) before checking it: a raw TypeError
    'unhashable type: list'. It is asked once now, checked, and only then used."""
    with pytest.raises(StrategyError, match=r"strategy lists_plan: plan\(\) holds \[0\], not"):
        tune("vector_add", problem={"n": 4096}, strategy=_ListsPlan, budget=4, db=db,
             settings=FAST)  # fmt: skip
    with Store(db) as store:
        assert store.query("SELECT count(*) FROM results")[0][0] == 0
