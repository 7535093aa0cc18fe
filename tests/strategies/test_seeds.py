"""Seeds: one that is not a whole number >= 0 gets one line naming it (random and grid gave
numpy's 'expected non-negative integer' and a SeedSequence TypeError), and every strategy runs
with every seed that is one, however large."""

import numpy as np
import pytest

from perfport._core import MissingExtra, PerfportError
from perfport.kernels import builtin
from perfport.space import kernel_space
from perfport.strategies import STRATEGIES
from perfport.tune.replay import ReplayData, simulate


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("seed", [-1, 1.5, True, "3"])
def test_a_bad_seed_is_named(name, seed):
    with pytest.raises(PerfportError, match="seed must be a whole number >= 0"):
        STRATEGIES[name](kernel_space(builtin("vector_add")), seed)


def _missing(name: str) -> str | None:
    """What keeps a strategy from running here (an optional package), or None."""
    try:
        STRATEGIES[name].check_available()
    except MissingExtra as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.skipif(bool(why := _missing(n)), reason=why or ""))
        for n in sorted(STRATEGIES)
    ],
)
def test_every_seed_perfport_takes_runs(name):
    # The Optuna samplers handed the seed on to numpy's RandomState, which refuses 2**32 and up:
    # a traceback from replay, a failed campaign from tune.
    space = kernel_space(builtin("vector_add"))
    data = ReplayData("synthetic", space, np.linspace(1.0, 2.0, len(space)))
    for seed in (2**32 - 1, 2**32, 2**64 + 5):
        first = simulate(data, STRATEGIES[name], 30, seed)
        assert len(first) == min(30, len(space))
        assert np.array_equal(first, simulate(data, STRATEGIES[name], 30, seed))
