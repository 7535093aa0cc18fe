"""The noise ceiling: one measurement's oracle timed in another."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.wg.ceiling import ceilings, group_medians, noise_ceiling, oracle_on_other, transfer


def test_oracle_on_other_times_the_first_best_in_the_second() -> None:
    first = np.array([1.0, 2.0, 3.0])
    second = np.array([4.0, 2.0, 3.0])
    assert oracle_on_other(first, second) == pytest.approx(2.0 / 4.0)
    assert oracle_on_other(second, first) == pytest.approx(1.0 / 2.0)
    assert oracle_on_other(first, first) == 1.0


def test_oracle_on_other_uses_only_sizes_that_ran_in_both() -> None:
    # The first's best size did not run in the second: the best shared size stands in.
    first = np.array([1.0, 2.0, 5.0])
    second = np.array([np.nan, 3.0, 1.5])
    assert oracle_on_other(first, second) == pytest.approx(1.5 / 3.0)
    assert np.isnan(oracle_on_other(np.array([1.0, np.nan]), np.array([np.nan, 1.0])))


def _samples(rounds: list[list[float]]) -> np.ndarray:
    """One scenario, rounds[r][w]: (1, W, R, 1)."""
    return np.array(rounds, dtype=np.float64).T[None, :, :, None]


def test_identical_rounds_have_a_ceiling_of_one() -> None:
    c = noise_ceiling(_samples([[1, 2, 3]] * 4), 1)
    assert (c.rounds, c.groups, c.scenarios, c.pairs) == (1, 4, 1, 12)
    assert c.ceiling == 1.0 and c.worst == 1.0


def test_rounds_that_disagree_lower_the_ceiling_both_ways() -> None:
    c = noise_ceiling(_samples([[1, 2], [2, 1]]), 1)
    assert c.pairs == 2
    assert c.ceiling == pytest.approx(0.5)
    assert c.worst == pytest.approx(0.5)


def test_groups_take_the_median_of_their_rounds() -> None:
    # Rounds 1-2 and 3-4: each group's median makes size 0 fastest, so the groups agree,
    # although single rounds do not.
    s = _samples([[1, 2], [1, 2], [3, 2], [1, 2]])
    assert group_medians(s, 2).shape == (1, 2, 2)
    assert noise_ceiling(s, 2).ceiling == 1.0
    assert noise_ceiling(s, 1).ceiling < 1.0
    assert [c.rounds for c in ceilings(s)] == [1, 2]


def test_group_sizes_outside_the_rounds_are_refused() -> None:
    with pytest.raises(ValueError, match="rounds per group must be 1-2"):
        noise_ceiling(_samples([[1, 2]] * 4), 3)
    with pytest.raises(ValueError, match="scenarios, sizes, rounds, launches"):
        group_medians(np.ones((2, 3)), 1)


def test_transfer_compares_two_whole_measurements() -> None:
    first = np.array([[1.0, 2.0], [1.0, 2.0]])
    second = np.array([[1.0, 2.0], [4.0, 2.0]])
    c = transfer(first, second)
    assert c.scenarios == 2 and c.pairs == 4
    assert c.ceiling == pytest.approx(0.5 ** (2 / 4))
    with pytest.raises(ValueError, match="differ in shape"):
        transfer(first, second[:1])
