"""Model-guided search: measures in the order a ranker predicts, refits it with every
measurement, and re-ranks."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from perfport._core import PerfportError
from perfport._core.spec import Param
from perfport.space import Space
from perfport.strategies.model_guided import ModelGuided


class _Ranker:
    """Predicts ``first`` until refitted, then ``after``; records what it was given."""

    def __init__(self, first: list[float], after: list[float]) -> None:
        self.first, self.after = np.array(first), np.array(after)
        self.seen: list[dict[int, float]] = []

    def predict(self) -> np.ndarray:
        return self.after if self.seen else self.first

    def refit(self, measured: Mapping[int, float]) -> None:
        self.seen.append(dict(measured))


def _space(n: int) -> Space:
    return Space([Param("x", tuple(range(n)))])


def test_it_asks_in_predicted_order_and_reranks_after_each_refit():
    ranker = _Ranker([3.0, 1.0, np.nan, 2.0, 5.0], [9.0, 9.0, 0.5, 1.0, 0.1])
    s = ModelGuided(_space(5), ranker=ranker)
    assert s.ask() == 1  # the fastest predicted
    s.tell(1, 7.0)
    assert ranker.seen == [{1: 7.0}]
    order = [1]
    while (i := s.ask()) is not None:
        order.append(i)
        s.tell(i, None if i == 4 else i + 1.0)
    assert order == [1, 4, 2, 3, 0]  # re-ranked by the refitted predictions
    assert ranker.seen[-1] == {1: 7.0, 2: 3.0, 3: 4.0, 0: 1.0}  # failures are not data
    assert s.best == (0, 1.0)


def test_without_refits_the_first_ranking_holds_and_nan_comes_last():
    ranker = _Ranker([3.0, 1.0, np.nan, 2.0], [0.0, 0.0, 0.0, 0.0])
    s = ModelGuided(_space(4), ranker=ranker, refit_every=100)
    order = []
    while (i := s.ask()) is not None:
        order.append(i)
        s.tell(i, 1.0)
    assert order == [1, 3, 0, 2] and ranker.seen == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "needs a ranker"),
        ({"ranker": _Ranker([1.0], [1.0])}, "predicted 1 values for a space of 3"),
        ({"ranker": _Ranker([1.0] * 3, [1.0] * 3), "refit_every": 0}, "refit_every=0"),
    ],
)
def test_bad_construction_is_a_clear_error(kwargs, message):
    with pytest.raises(PerfportError, match=message):
        ModelGuided(_space(3), **kwargs)
