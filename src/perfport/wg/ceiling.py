"""The noise ceiling of a work-group oracle: how much of the fastest size one measurement's
fastest size gets when timed in another, independent measurement of the same scenario.

A predictor is scored against one measurement's oracle; a second measurement of the same
protocol disagrees with the first about which size is fastest, so no predictor can be sure of
more than the first oracle scores on the second. Samples come as (scenarios, sizes, rounds,
launches per round) with NaN where a size did not run, as the interleaved-round collections
store them (``data/wg/rounds/*.samples.npz``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from perfport._core.stats import geomean


@dataclass(frozen=True)
class NoiseCeiling:
    """An oracle of ``rounds`` rounds, timed on each other disjoint group of as many rounds."""

    rounds: int
    groups: int  # disjoint groups of ``rounds`` rounds per scenario
    scenarios: int
    pairs: int  # (scenario, ordered pair of groups) compared
    ceiling: float  # geometric mean over the pairs of t_best / t[the other group's best]
    worst: float  # the lowest single pair


def oracle_on_other(first: np.ndarray, second: np.ndarray) -> float:
    """``second``'s fastest time over its time at ``first``'s fastest size, over the sizes
    that ran in both (NaN where none did)."""
    ran = np.isfinite(first) & np.isfinite(second) & (first > 0) & (second > 0)
    if not ran.any():
        return float("nan")
    a = np.where(ran, first, np.inf)
    b = np.where(ran, second, np.inf)
    return float(b.min() / b[int(np.argmin(a))])


def group_medians(samples: np.ndarray, rounds: int) -> np.ndarray:
    """(S, W, groups): each size's median over each disjoint group of ``rounds`` consecutive
    rounds (its launches pooled); leftover rounds are dropped."""
    if samples.ndim != 4:
        raise ValueError(
            f"samples must be (scenarios, sizes, rounds, launches), not {samples.shape}"
        )
    total = samples.shape[2]
    if not 1 <= rounds <= total // 2:
        raise ValueError(
            f"rounds per group must be 1-{total // 2} for {total} rounds, not {rounds}"
        )
    groups = total // rounds
    s, w = samples.shape[:2]
    cut = samples[:, :, : groups * rounds].reshape(s, w, groups, -1)
    with np.errstate(all="ignore"):
        # A size that never ran in a group stays NaN (nanmedian warns on an all-NaN slice).
        return np.nanmedian(np.where(np.isfinite(cut), cut, np.nan), axis=3)


def noise_ceiling(samples: np.ndarray, rounds: int = 1) -> NoiseCeiling:
    """Every scenario's oracle of each group of ``rounds`` rounds timed on every other group
    (both directions): the most a predictor can score against an oracle of that many rounds."""
    medians = group_medians(samples, rounds)
    ratios: list[float] = []
    scenarios = 0
    for scenario in medians:
        mine = [
            oracle_on_other(scenario[:, i], scenario[:, j])
            for i, j in permutations(range(scenario.shape[1]), 2)
        ]
        mine = [r for r in mine if np.isfinite(r)]
        scenarios += bool(mine)
        ratios.extend(mine)
    values = np.array(ratios)
    return NoiseCeiling(
        rounds=rounds,
        groups=medians.shape[2],
        scenarios=scenarios,
        pairs=len(ratios),
        ceiling=geomean(values),
        worst=float(values.min()) if len(values) else float("nan"),
    )


def ceilings(samples: np.ndarray) -> list[NoiseCeiling]:
    """The ceiling of an oracle of 1, 2, 4 ... rounds, up to half the rounds measured."""
    out = []
    n = 1
    while 2 * n <= samples.shape[2]:
        out.append(noise_ceiling(samples, n))
        n *= 2
    return out


def transfer(first: np.ndarray, second: np.ndarray) -> NoiseCeiling:
    """Two whole measurements of the same scenarios, (S, W) times each (e.g. two sessions'
    medians): each one's oracle timed on the other, both directions (``rounds`` is 1 and
    ``groups`` 2: each measurement counts as one group)."""
    if first.shape != second.shape:
        raise ValueError(f"the two measurements differ in shape: {first.shape} and {second.shape}")
    pair = np.stack([first, second], axis=2)[..., None]  # (S, W, 2 groups, 1 launch)
    return noise_ceiling(pair, 1)
