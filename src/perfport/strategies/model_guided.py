"""Model-guided search (issue 24, item 7): measure first the configurations a model predicts
fastest, and refit the model as measurements arrive.

The model lives above this layer (``perfport.model``, L5); the strategy is handed a
``Ranker`` (predictions for every configuration, and a ``refit`` that learns from the
measurements so far), as ``prior`` is handed scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Protocol

import numpy as np

from perfport._core import PerfportError
from perfport.space import Space
from perfport.strategies.base import Strategy


class Ranker(Protocol):
    """Predicted times of a space's configurations, from a model that learns.

    ``predict()`` returns one value per configuration index (lower is faster; NaN where the
    model cannot predict, ranked last). ``refit(measured)`` is called with every successful
    measurement so far ({index: time in ms}) and may change later predictions; it must not
    raise for data it cannot use (keep the previous fit)."""

    def predict(self) -> np.ndarray: ...

    def refit(self, measured: Mapping[int, float]) -> None: ...


class ModelGuided(Strategy):
    """Asks for the untold configuration the ranker predicts fastest; after every
    ``refit_every`` successful measurements it refits the ranker and re-ranks."""

    name: ClassVar[str] = "model_guided"
    summary: ClassVar[str] = (
        "measures first what a calibrated model predicts fastest, refitting it as it goes"
    )
    takes_ranker: ClassVar[bool] = True
    requires: ClassVar[str] = (
        "a calibration of the device ('perfport model calibrate ... --out FILE'), given as "
        "--calibration FILE; loopy kernels only (loopy-matmul, loopy-dg, loopy-fd, or a loopy "
        "space file: a .py defining program(config))"
    )

    def __init__(
        self, space: Space, seed: int = 0, ranker: Ranker | None = None, refit_every: int = 1
    ) -> None:
        super().__init__(space, seed)
        if ranker is None:
            raise PerfportError(
                "model_guided needs a ranker (a calibrated model of the kernel); build one "
                "with perfport.model.guided.ModelRanker"
            )
        if refit_every < 1:
            raise PerfportError(f"refit_every={refit_every}: give a positive integer")
        self.ranker = ranker
        self.refit_every = refit_every
        self._since_refit = 0
        self._order = self._rank()

    def _rank(self) -> np.ndarray:
        predicted = np.asarray(self.ranker.predict(), dtype=float)
        if predicted.shape != (len(self.space),):
            raise PerfportError(
                f"the ranker predicted {predicted.size} values for a space of "
                f"{len(self.space)} configurations; give one per configuration"
            )
        # NaN last; ties keep index order, so the search is deterministic.
        return np.argsort(np.where(np.isnan(predicted), np.inf, predicted), kind="stable")

    def ask(self) -> int | None:
        for index in self._order:
            if int(index) not in self.told:
                return int(index)
        return None

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if value is None:
            return
        self._since_refit += 1
        if self._since_refit >= self.refit_every:
            self._since_refit = 0
            self.ranker.refit({i: v for i, v in self.told.items() if v is not None})
            self._order = self._rank()
