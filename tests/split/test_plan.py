"""Split plans against hand-computed cases of erdem2018's Eqs. 4-9 and Algorithm 1."""

from __future__ import annotations

import pytest

from perfport._core import SpecError
from perfport.split.plan import SplitPlan, plan_split, split_factors, theoretical_ms


def test_eq4_speeds_over_their_sum():
    # times 2 ms and 6 ms: speeds 1/2 and 1/6, sum 2/3 -> 0.75 and 0.25
    assert split_factors([2.0, 6.0]) == pytest.approx((0.75, 0.25))
    assert sum(split_factors([1.0, 3.0, 7.0])) == pytest.approx(1.0)


def test_paper_example_512_items_split_0_4_and_0_6():
    # Section 2.2's example: G = 512, S = (0.4, 0.6), i.e. times 1/0.4 and 1/0.6 ms.
    # wg = (64, 16): gamma = (3.2, 19.2) -> (3, 19); S^ = (192, 304) / 512; the residue is
    # 16 items: device 0 needs ceil(16/64) = 1 group (64 items), device 1 ceil(16/16) = 1
    # group (16 items), so device 1 takes it: groups (3, 20), shares (0.375, 0.625).
    plan = plan_split(["a", "b"], 512, [64, 16], [2.5, 1 / 0.6])
    assert plan.split_factors == pytest.approx((0.4, 0.6))
    assert plan.groups == (3, 20) and plan.residue_device == 1
    assert plan.parts == ((0, 192), (192, 512))
    assert plan.adjusted_factors == pytest.approx((0.375, 0.625))
    # Algorithm 1: max(0.4 * 2.5, 0.6 * 1.667) = 1.0; adjusted max(0.9375, 1.0417)
    assert plan.theoretical_ms == pytest.approx(1.0)
    assert plan.adjusted_theoretical_ms == pytest.approx(0.625 / 0.6)


def test_residue_not_a_multiple_of_the_block_leaves_a_partial_group():
    # G = 100, equal times, wg = (16, 24): gamma = (3.125, 2.083) -> (3, 2), 48 + 48 items;
    # residue 4: device 0 covers it with 16 items, device 1 with 24 -> device 0, 4 groups
    # of which the last has 4 of 16 items busy.
    plan = plan_split(["a", "b"], 100, [16, 24], [1.0, 1.0])
    assert plan.groups == (4, 2) and plan.residue_device == 0
    assert plan.parts == ((0, 52), (52, 100))
    assert plan.adjusted_factors == pytest.approx((0.52, 0.48))


def test_exact_division_has_no_residue_and_equal_work_ties_go_to_the_earlier_finish():
    plan = plan_split(["a", "b"], 1024, [16, 16], [1.0, 1.0])
    assert plan.groups == (32, 32) and plan.residue_device is None
    # 3 devices, G = 96, wg 16 each, times 1, 2, 4 ms: S = (4, 2, 1) / 7; gamma = (3.43,
    # 1.71, 0.86) -> (3, 1, 0) = 64 items, residue 32 = 2 groups on any; finishing times
    # 1 * 80/96, 2 * 48/96, 4 * 32/96 -> device 0 finishes first.
    plan = plan_split(["a", "b", "c"], 96, [16, 16, 16], [1.0, 2.0, 4.0])
    assert plan.groups == (5, 1, 0) and plan.residue_device == 0
    assert plan.parts[2] == (96, 96)


def test_theoretical_is_the_slowest_share():
    assert theoretical_ms([0.5, 0.5], [2.0, 4.0]) == 2.0


def test_plan_round_trips_through_json():
    plan = plan_split(["a", "b"], 100, [16, 24], [1.0, 3.0], dimension=1)
    assert SplitPlan.from_json(plan.to_json()) == plan


@pytest.mark.parametrize(
    ("devices", "blocks", "times"),
    [(["a"], [1], [1.0]), (["a", "b"], [0, 1], [1.0, 1.0]), (["a", "b"], [1, 1], [0.0, 1.0])],
)
def test_bad_plans_are_refused(devices, blocks, times):
    with pytest.raises(SpecError):
        plan_split(devices, 10, blocks, times)


def test_a_denormal_time_gives_finite_factors_and_a_plan():
    # 1 / 5e-324 is inf, and inf / inf NaN: the factors are taken relative to the fastest
    assert split_factors([5e-324, 1.0]) == pytest.approx((1.0, 0.0))
    assert split_factors([1e-300, 1e300]) == pytest.approx((1.0, 0.0))
    plan = plan_split(["a", "b"], 1000, [1, 1], [5e-324, 1.0])
    assert plan.parts == ((0, 1000), (1000, 1000))
