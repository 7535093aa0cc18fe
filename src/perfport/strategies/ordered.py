"""Strategies that follow an order fixed up front: a coarse-to-fine grid, and a prior
ranking (from a model or from other devices' measurements) followed by Bayesian optimisation."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from perfport.space import Space
from perfport.strategies.base import FixedOrder, Strategy, checked_seed
from perfport.strategies.geometry import Geometry
from perfport.strategies.region import RegionForest, RegionSweep, top_region


def _refinement_depth(size: int) -> np.ndarray:
    """For positions 0..size-1, the halving level at which a coarse-to-fine lattice reaches
    them: the ends at 0, the middle at 1, the quarters at 2, ..."""
    depth = np.full(size, -1)
    if size == 0:
        return depth
    depth[[0, size - 1]] = 0
    level, points = 1, [0, size - 1]
    while (depth < 0).any():
        new = []
        for a, b in itertools.pairwise(points):
            mid = (a + b) // 2
            if depth[mid] < 0:
                depth[mid] = level
            new += [a, mid]
        points = sorted(set([*new, size - 1]))
        level += 1
        if level > 64:
            depth[depth < 0] = level
    return depth


class GridSearch(FixedOrder):
    """Coarse to fine: first the configurations whose every value lies on a coarse lattice of
    its parameter's values (ends, then middles, then quarters, ...), in random order within a
    level."""

    name = "grid"
    summary = "coarse-to-fine grid over each parameter's values"

    def __init__(self, space: Space, seed: int = 0) -> None:
        geometry = Geometry(space)
        depths = [
            _refinement_depth(int(n))[geometry.pos[:, d]] for d, n in enumerate(geometry.sizes)
        ]
        level = np.max(np.stack(depths), axis=0) if depths else np.zeros(len(space), dtype=np.int64)
        tiebreak = np.random.default_rng(checked_seed(seed)).random(len(space))
        super().__init__(space, seed, np.lexsort((tiebreak, level)))


def _diverse_top(
    scores: np.ndarray, positions: np.ndarray, count: int, taken: Sequence[int] = ()
) -> list[int]:
    """The ``count`` best-scored configurations that differ from each other, and from those
    ``taken`` before, in at least two parameters. A prior's top ranks are often one good
    configuration and its neighbours, which another device tends to rate alike; spreading the
    picks covers more of the regions the prior likes (on the Kernel Tuner GEMM caches the best
    of 10 rises from 0.68-0.85 to 0.91-0.94 of the optimum). NaN scores (unknown to the prior)
    are never picked."""
    known = np.flatnonzero(np.isfinite(scores))
    picked: list[int] = []
    for i in known[np.argsort(-scores[known], kind="stable")]:
        if all(np.count_nonzero(positions[i] != positions[j]) >= 2 for j in [*taken, *picked]):
            picked.append(int(i))
            if len(picked) == count:
                break
    return picked


class PriorGuided(Strategy):
    """Measure ``first`` configurations a prior ranks highest (spread out: no two differ in
    one parameter only), then search on with ``bayes_sweep`` (random-forest Bayesian
    optimisation that sweeps the incumbent's one-parameter changes after ``stall``
    evaluations without a gain; ``stall=0``: plain ``bayes_rf``), which has seen them.
    ``scores`` (one per legal configuration, higher is more promising, NaN for unknown) come
    from a learned model or from other devices' results (``perfport tune`` and ``replay`` take
    them from the store); without them this is plain ``bayes_sweep``, so the strategy is never
    worse off for having no prior. The sweep was adopted by measurement, cold and with
    relatives (docs/results/2026-11-26-bayes-sweep.md).

    After the picks the forest keeps to the configurations the prior rates in its best
    ``region`` fraction of those it knows (``region=0``: anywhere), except every
    ``outside_every``-th ask, which it spends outside them: the prior says well where the good
    configurations are and badly which they are (strategies/region.py). Once ``judge``
    configurations outside the region are measured (whoever chose them), it is dropped for
    good as soon as the best time outside beats the best inside: a prior that misleads about
    where stops limiting the search. The sweep's climbs are never limited
    (docs/results/2026-11-27-region-sweep.md).

    When ``give_up`` prior picks in a row fail here (the relatives' best configurations do
    not compile or launch on this device), the rest of the ranking and the region are dropped
    and the search goes on as ``bayes_sweep``, which has seen the failures: the prior costs at
    most ``give_up`` wasted evaluations instead of ``first``
    (docs/results/2026-11-26-prior-relatives.md)."""

    name = "prior"
    summary = (
        "other devices' best configurations first (from the store), then bayes_sweep within "
        "the region they rate best"
    )
    takes_prior = True

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        scores: Sequence[float] | None = None,
        first: int = 10,
        give_up: int = 3,
        stall: int = 10,
        region: float = 0.15,
        outside_every: int = 4,
        judge: int = 2,
    ) -> None:
        if give_up < 1 or stall < 0 or not 0.0 <= region <= 1.0 or outside_every < 0 or judge < 1:
            raise ValueError(
                "give_up must be >= 1, stall >= 0, region in [0, 1], outside_every >= 0 and "
                f"judge >= 1, got {give_up}, {stall}, {region}, {outside_every}, {judge}"
            )
        super().__init__(space, seed)
        self.give_up = give_up
        # Private names: subclasses (prior_transfer) have a judge and turns of their own.
        self.region, self._outside_every, self._region_judge = region, outside_every, judge
        self._failed_in_a_row = 0
        self._then: RegionForest | RegionSweep = (
            RegionSweep(space, seed, stall=stall) if stall else RegionForest(space, seed)
        )
        self._ranking: list[int] = []
        self._first = max(1, first)
        self._next = 0
        self._inside: np.ndarray | None = None  # the region; None: none, or dropped
        self._dropped = False
        self._region_turn = 0
        if scores is not None:
            self.rescore(scores)

    def rescore(self, scores: Sequence[float] | np.ndarray) -> None:
        """New prior scores mid-search (other devices' results landing while this one runs):
        the prior picks not made yet come from them, never a configuration already told;
        the picks made stay, and the region follows the new scores unless it was dropped.
        Once ``first`` picks are made, the search is the forest's."""
        values = np.asarray(scores, dtype=np.float64)
        if len(values) != len(self.space):
            raise ValueError(
                f"the prior scores {len(values)} configurations; the space has {len(self.space)}"
            )
        if self.region and not self._dropped:
            inside = top_region(values, self.region)
            self._inside = inside if inside.any() else None
        made = self._ranking[: self._next]
        if len(made) >= self._first:
            return
        values = values.copy()
        values[[*made, *self.told]] = np.nan
        self._ranking = made + _diverse_top(
            values, self._then.geometry.pos, self._first - len(made), taken=made
        )

    def ask(self) -> int | None:
        while self._next < len(self._ranking):
            i = self._ranking[self._next]
            self._next += 1
            if i not in self.told:
                return i
        if self._inside is None:
            self._then.allowed = None
        else:
            self._region_turn += 1
            turn, every = self._region_turn, self._outside_every
            outside = every and turn % every == 0
            self._then.allowed = ~self._inside if outside else self._inside
        return self._then.ask()

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        self._then.tell(index, value)
        if index in self._ranking[: self._next]:  # a prior pick: does the prior hold here?
            self._failed_in_a_row = self._failed_in_a_row + 1 if value is None else 0
            if self._failed_in_a_row >= self.give_up:
                self._stop_following()
                self._drop_region()
        if self._inside is not None and self._outside_better(self._inside):
            self._drop_region()

    def _stop_following(self) -> None:
        """No more of the prior's picks, also after a rescore (a live prior refreshed with
        the same relatives would otherwise bring back the picks it gave up on)."""
        self._ranking = self._ranking[: self._next]
        self._first = self._next

    def _drop_region(self) -> None:
        self._inside, self._dropped = None, True
        self._then.allowed = None

    def _outside_better(self, inside: np.ndarray) -> bool:
        """Whether, with ``judge`` configurations outside the region measured, outside's best
        beats inside's."""
        outside = [v for i, v in self.told.items() if not inside[i]]
        if len(outside) < self._region_judge:
            return False
        ran_out = [v for v in outside if v is not None]
        ran_in = [v for i, v in self.told.items() if inside[i] and v is not None]
        if not ran_out:
            return False
        return not ran_in or min(ran_out) < min(ran_in)


class PriorRegion(PriorGuided):
    """``prior`` as first measured with a region (docs/results/2026-11-26-prior-region.md):
    continuing with plain ``bayes_rf`` (``stall=0``) instead of ``bayes_sweep``."""

    name = "prior_region"
    summary = "prior's picks, then bayes_rf (no sweep) within the prior's best 15% of the space"

    def __init__(
        self, space: Space, seed: int = 0, scores: Sequence[float] | None = None, **settings: Any
    ) -> None:
        super().__init__(space, seed, scores, **{"stall": 0, **settings})
