"""RunSettings refuses, in one line, a seed that the store or numpy could not take."""

from __future__ import annotations

import pytest

from perfport.measure import RunSettings
from perfport.measure.settings import MAX_SEED


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, 10**30, 1.5, "3", True, None])
def test_a_seed_outside_64_bits_is_refused_in_one_line(seed):
    with pytest.raises(ValueError, match="from 0 to") as info:
        RunSettings(seed=seed)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("seed", [0, 7, MAX_SEED])
def test_every_64_bit_seed_is_kept(seed):
    assert RunSettings(seed=seed).seed == seed


@pytest.mark.parametrize("timeout", [0, -5, float("nan"), float("inf"), "3", True])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(timeout):
    """timeout_s=0 stored every trial as a timeout ('worker killed')."""
    from perfport._core import PerfportError

    for name in ("timeout_s", "build_timeout_s"):
        with pytest.raises(PerfportError, match=f"{name} .*: give a number of seconds above 0"):
            RunSettings(**{name: timeout})
