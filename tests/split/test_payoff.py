"""Rebalancing that pays, on stand-in step timings: no re-split for part times within their
step-to-step noise (two identical GPUs), none whose move costs more than it saves over the
remaining steps, and one that pays when a device is clearly slower and steps remain."""

from __future__ import annotations

from perfport.kernels import builtin
from perfport.split.halo import Range
from perfport.split.payoff import element_bytes, moved_elements, payoff, transfer_rate
from perfport.split.plan import plan_split
from perfport.split.stepping import rebalancer, step_split
from perfport.split.steps import Step

EXTENT = 16384
ROW = 16384 * 4  # one row of a float 16384^2 stencil
HALVES: tuple[Range, ...] = ((0, 8192), (8192, EXTENT))


def _steps(times: list[tuple[float, float]], mb_per_ms: float = 0.2) -> list[Step]:
    """Steps on two halves with the given part times, a 128 KB exchange after each at
    ``mb_per_ms``."""
    nbytes = 2 * ROW
    return [
        Step(HALVES, max(t), t, nbytes / (mb_per_ms * 1e6), nbytes) for t in times
    ]  # fmt: skip


def _plan(alone: tuple[float, float] = (2.09, 2.09)):
    return plan_split(["a", "b"], EXTENT, [64, 64], list(alone))


def test_identical_devices_within_their_noise_are_not_re_split():
    # part times 5% apart, yet each device's own step-to-step range is 10%
    # (a fast transfer and many steps left: only the noise holds the split)
    noisy = _steps([(1.21, 1.15), (1.10, 1.16), (1.20, 1.14)], mb_per_ms=1000.0)
    replan = rebalancer(_plan(), steps=100000, row_bytes=ROW)
    assert replan(noisy) is None
    assert rebalancer(_plan(), tolerance=0.2, steps=50, row_bytes=ROW)(noisy) is None


def test_a_clearly_slower_device_is_re_split_when_the_saving_covers_the_move():
    slow = _steps([(2.0, 1.0), (2.01, 1.0), (1.99, 1.01)], mb_per_ms=10.0)
    parts = rebalancer(_plan((4.0, 2.0)), steps=200, row_bytes=ROW)(slow)
    assert parts is not None and parts[0][1] - parts[0][0] < 8192


def test_a_move_that_costs_more_than_it_saves_is_not_made():
    slow = _steps([(2.0, 1.0), (2.01, 1.0), (1.99, 1.01)], mb_per_ms=0.2)
    # ~2700 rows of 64 KB at 200 MB/s: ~900 ms against ~0.5 ms a step over 40 steps
    assert rebalancer(_plan((4.0, 2.0)), steps=45, row_bytes=ROW)(slow) is None
    guess = payoff(slow, 3, ((0, 5500), (5500, EXTENT)), [(0, 2.0 / 8192), (0, 1.0 / 8192)],
                   40, ROW)  # fmt: skip
    assert guess.imbalance > guess.noise and 0 < guess.saving_ms < guess.cost_ms
    assert not guess.pays
    assert rebalancer(_plan((4.0, 2.0)), steps=100000, row_bytes=ROW)(slow) is not None


def test_moves_and_rates_are_measured_from_the_steps():
    assert moved_elements(HALVES, ((0, 8000), (8000, EXTENT))) == 192
    assert moved_elements(HALVES, HALVES) == 0
    assert moved_elements(HALVES, ((0, EXTENT), (EXTENT, EXTENT))) == 8192
    steps = _steps([(1.0, 1.0)], mb_per_ms=0.5)
    assert transfer_rate(steps) == (0.5e6, False)
    assert transfer_rate([Step(HALVES, 1.0, (1.0, 1.0))]) is None
    moved = Step(HALVES, 1.0, (1.0, 1.0), 1.0, 100, moved_ms=2136.0, moved_bytes=15_900_000)
    assert transfer_rate([*steps, moved]) == (15_900_000 / 2136.0, True)


def test_the_first_move_counts_its_rebuilds_and_later_ones_their_measured_rate():
    slow = _steps([(2.0, 1.0), (2.01, 1.0), (1.99, 1.01)], mb_per_ms=10.0)
    plan = _plan((4.0, 2.0))
    assert rebalancer(plan, steps=200, row_bytes=ROW)(slow) is not None
    # the same saving against a first move that rebuilds for 2 s (the GPU run's 2136 ms)
    assert rebalancer(plan, steps=200, row_bytes=ROW, first_move_ms=2000.0)(slow) is None
    # after a measured move at 10 MB/ms, its rate alone prices the next: no 2 s added
    done = [Step(HALVES, 2.0, (2.0, 1.0), 0.0, 0, moved_ms=10.0, moved_bytes=100_000_000)]
    again = rebalancer(plan, steps=200, row_bytes=ROW, first_move_ms=2000.0)([*done, *slow])
    assert again is not None


def test_element_bytes_is_a_row_of_every_cut_array():
    spec = builtin("stencil")
    problem = spec.problem.merged({"width": 100, "height": 60})
    split = step_split(spec, problem, None)
    env = spec.env(spec.default or {}, problem)
    got = element_bytes(spec, split, env)
    assert got > 0 and got % 100 == 0
