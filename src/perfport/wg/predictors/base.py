"""The extension point of work-group-size prediction: ``WgPredictor``, and the best static
size (the paper's baseline) that every predictor keeps as its last resort."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from perfport._core.errors import PerfportError, SettingsError
from perfport._core.estimator import Estimator
from perfport.wg.dataset import WgDataset

# Named in the missing-extra error of every predictor that needs scikit-learn.
SKLEARN_PURPOSE = "Work-group-size models"
ANY_SIZE = 2**62  # a maximum work-group no size reaches: every size allowed


class UnknownMethodError(PerfportError, ValueError):
    """A work-group-size method (or a predictor's classifier, fallback or target) perfport
    does not have; a ValueError too, as such names once raised. One line naming the valid
    names."""


def check_settings(ok: bool, message: str) -> None:
    """SettingsError (a ValueError) with ``message``, saying what the settings must be, unless
    ``ok``: ``fit`` checks the constructor's settings, which the constructor only stores."""
    if not ok:
        raise SettingsError(message)


def baseline_column(data: WgDataset) -> int:
    """The size legal in the most scenarios (all of them, where one is), best by geometric-mean
    fraction of the oracle among those: the paper's baseline, the best static choice."""
    legal = data.legal
    counts = legal.sum(0)
    best = np.flatnonzero(counts == counts.max())
    oracle_t = np.nanmin(data.runtimes, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        perf = np.where(legal, np.log(oracle_t[:, None] / data.runtimes), np.nan)
    scores = np.nanmean(perf[:, best], axis=0)
    return int(best[int(np.nanargmax(scores))])


class WgPredictor(Estimator, ABC):
    """Chooses a work-group size (a column of the training data's ``sizes``) for a scenario.

    Contract, as scikit-learn's estimators: the constructor only stores its arguments, under
    their own names (``get_params``, ``set_params``, so ``sklearn.base.clone`` copies one
    unfitted); ``fit`` checks them, learns from a ``WgDataset`` and returns the predictor;
    fitted attributes end in ``_`` (``sizes_`` and ``baseline_`` for every predictor), and
    reading one before ``fit`` (``propose`` does) raises ``NotFittedError``, which is
    scikit-learn's and a PerfportError. ``name`` is the method's name in
    ``perfport.wg.predictors.METHODS``, from the settings. After ``fit``, ``propose`` answers one scenario given
    the columns already refused for it; the caller (the evaluation, the daemon) calls it
    again with the refused size added until a size runs. ``propose`` never returns a refused
    column while any other column fits ``max_wg``. A fitted predictor is read-only in
    ``propose``, so threads may share it; fitted predictors are pickled into model files.
    """

    @property
    @abstractmethod
    def name(self) -> str: ...

    @abstractmethod
    def fit(self, data: WgDataset) -> WgPredictor: ...

    @abstractmethod
    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        """A column of ``sizes`` for a scenario with features ``x``; never one in ``refused``."""

    def propose_many(
        self, x: np.ndarray, max_wg: Sequence[int], refused: Sequence[set[int]]
    ) -> list[int]:
        """``propose`` for each row of ``x`` (scenarios asked together, as a daemon coalesces
        them), with the same answers; a family overrides it where one call over all rows
        costs less than one per row."""
        return [self.propose(row, m, r) for row, m, r in zip(x, max_wg, refused, strict=True)]

    def propose_own(self, x: np.ndarray, max_wg: int, refused: set[int]) -> tuple[int, int]:
        """``propose``, and the model's own choice: its proposal with every size allowed
        (where the two differ, a fallback replaced it). A family overrides it where both
        come from one prediction."""
        return self.propose(x, max_wg, refused), self.propose(x, ANY_SIZE, set())

    def propose_many_own(
        self, x: np.ndarray, max_wg: Sequence[int], refused: Sequence[set[int]]
    ) -> list[tuple[int, int]]:
        """``propose_own`` for each row of ``x``, as ``propose_many`` asks them; a family
        overrides it where one call over all rows costs less than one per row."""
        rows = zip(x, max_wg, refused, strict=True)
        return [self.propose_own(row, m, r) for row, m, r in rows]

    def _candidates(self, max_wg: int, refused: set[int]) -> np.ndarray:
        area = self.sizes_[:, 0] * self.sizes_[:, 1]
        ok = area <= max_wg
        ok[list(refused)] = False
        return np.flatnonzero(ok)

    def _store_sizes(self, data: WgDataset) -> None:
        self.sizes_ = data.sizes
        self.baseline_ = baseline_column(data)
