"""The prior as a model's input, not only as first picks (issue 27, "make the prior count").

``prior`` measures the relatives' best configurations first and then searches with a random
forest that knows nothing of the relatives. Two things go wrong there
(docs/results/2026-11-26-prior-relatives.md): where the relatives mislead, the forest, fitted
first on their picks only, keeps searching near them; and after the picks the relatives'
ranking of the other configurations is thrown away. ``TransferPrior`` keeps the ranking as a
feature of the forest, interleaves the prior's picks with the forest's own, and stops following
the prior as soon as the forest's own picks do better.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfport.space import Space
from perfport.strategies.ordered import PriorGuided


def prior_rank(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """Each configuration's place in the prior, scaled to (0, 1] (1: the prior's best); 0 where
    the prior knows nothing (it failed or was never measured on every relative). Ranks, not
    the scores, so one relative with a wide spread of times does not dominate the scale."""
    values = np.asarray(scores, dtype=np.float64)
    known = np.flatnonzero(np.isfinite(values))
    rank = np.zeros(len(values))
    if len(known):
        order = known[np.argsort(values[known], kind="stable")]
        rank[order] = np.arange(1, len(known) + 1) / len(known)
    return rank


class TransferPrior(PriorGuided):
    """``prior`` with the relatives' ranking as an input of the forest.

    - The forest sees each configuration's place in the prior (``prior_rank``) beside its
      parameters, so it learns from the measurements how far the relatives are to be trusted
      here: follows them where their ranking predicts this device's times, ignores (or
      inverts) it where it does not.
    - While the prior's picks last, every ``own_every``-th evaluation is the forest's own
      choice (a space-filling one at first), so the forest never sees only the prior's region.
    - Once ``judge`` of the prior's picks and ``judge`` of the forest's own have run, the prior
      is followed only while its best pick is at least as fast as the forest's best: a prior
      that runs but misleads is dropped after a few evaluations, not after ``first``.
    - ``give_up`` failing picks in a row drop it too, as in ``prior``.

    Without scores it is exactly ``bayes_rf``, as ``prior`` with ``stall=0`` is."""

    name = "prior_transfer"
    summary = (
        "prior picks interleaved with bayes_rf's own, the prior as a feature of the forest; "
        "drops a misleading prior"
    )

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        scores: Sequence[float] | None = None,
        first: int = 10,
        give_up: int = 3,
        own_every: int = 2,
        judge: int = 2,
        feature: bool = True,
    ) -> None:
        if own_every < 0 or judge < 1:
            raise ValueError(f"own_every must be >= 0 and judge >= 1, got {own_every}, {judge}")
        self.own_every = own_every
        self.judge = judge
        self.feature = feature
        self._own: list[int] = []  # what the forest chose while the prior was followed
        self._turn = 0
        # As measured (prior-transfer page): the prior, then plain bayes_rf, no region.
        super().__init__(
            space, seed, scores=scores, first=first, give_up=give_up, stall=0, region=0
        )

    def rescore(self, scores: Sequence[float] | np.ndarray) -> None:
        super().rescore(scores)
        if not self.feature:
            return
        forest = self._then
        forest.features = np.column_stack([forest.geometry.unit, prior_rank(scores)])

    def _following(self) -> bool:
        return self._next < len(self._ranking)

    def ask(self) -> int | None:
        if self._following():
            self._turn += 1
            if self.own_every and self._turn % self.own_every == 0:
                index = self._then.ask()
                if index is not None:
                    self._own.append(index)
                return index
        return super().ask()

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if self._following() and self._misled():
            self._stop_following()

    def _misled(self) -> bool:
        """Whether the forest's own picks have beaten the prior's, once both had a chance."""
        picks = [self.told[i] for i in self._ranking[: self._next] if i in self.told]
        own = [self.told[i] for i in self._own if i in self.told]
        if len(picks) < self.judge or len(own) < self.judge:
            return False
        ran_picks = [v for v in picks if v is not None]
        ran_own = [v for v in own if v is not None]
        if not ran_own:
            return False
        return not ran_picks or min(ran_picks) > min(ran_own)
