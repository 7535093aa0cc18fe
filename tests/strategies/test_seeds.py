"""A strategy built with a seed numpy refuses: one line naming the seed (random and grid gave
numpy's 'expected non-negative integer' and a SeedSequence TypeError)."""

import pytest

from perfport._core import PerfportError
from perfport.kernels import builtin
from perfport.space import kernel_space
from perfport.strategies import STRATEGIES


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("seed", [-1, 1.5, True, "3"])
def test_a_bad_seed_is_named(name, seed):
    with pytest.raises(PerfportError, match="seed must be a whole number >= 0"):
        STRATEGIES[name](kernel_space(builtin("vector_add")), seed)
