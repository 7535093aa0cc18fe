"""The population strategies with configurations told before their first ask, as ``perfport
tune`` tells the default configuration: diff_evo redrew its whole population every generation
(a random search) and ended while legal configurations were left unmeasured."""

import numpy as np
import pytest

from perfport._core import Param
from perfport.space import Space
from perfport.strategies import STRATEGIES, DifferentialEvolution, checked_ask

SPACE = Space([Param("a", tuple(range(1, 9))), Param("b", tuple(range(1, 9)))])  # 64
TIMES = np.exp(np.random.default_rng(1).normal(size=len(SPACE)))


def _run(strategy, limit: int | None = None) -> None:
    for _ in range(limit or len(SPACE)):
        i = checked_ask(strategy)
        if i is None:
            return
        strategy.tell(i, float(TIMES[i]))


@pytest.mark.parametrize("name", ["diff_evo", "genetic"])
@pytest.mark.parametrize("pretold", [[0], list(range(0, 64, 2))])  # one, and more than size
def test_the_search_ends_only_when_every_configuration_is_told(name, pretold):
    for seed in range(20):
        strategy = STRATEGIES[name](SPACE, seed)
        for i in pretold:
            strategy.tell(i, float(TIMES[i]))
        _run(strategy)
        assert len(strategy.told) == len(SPACE), f"{name} seed {seed} ended early"


def test_diff_evo_keeps_a_pretold_configuration_in_one_population():
    strategy = DifferentialEvolution(SPACE, 1)
    strategy.tell(5, float(TIMES[5]))
    _run(strategy, limit=strategy.size - 1)  # the first generation: the told one, filled up
    assert 5 in strategy.members and len(strategy.members) == strategy.size
    for _ in range(40):  # from then on a member is only ever replaced by a faster one
        before = [TIMES[m] for m in strategy.members]
        _run(strategy, limit=1)
        after = [TIMES[m] for m in strategy.members]
        assert all(a <= b for a, b in zip(after, before, strict=True))
