"""Beyond Cummins et al. 2016: predict a scenario's whole performance vector, then choose.

``WgPerformanceKnn`` predicts, for every candidate size w at once, the log relative performance
log(t_oracle / t_w) of a new scenario as the distance-weighted mean of the vectors of its k
nearest training scenarios (standardised features, the device's features weighted up), and
proposes the best predicted size that is legal for the scenario and not refused. Classifiers
keep only each training scenario's oracle label and the paper's regressors learn one size at a
time; the vector keeps the near ties (the second best is often within 1% of the best) and the
sizes that are bad everywhere, which is what decides a good choice on devices where most sizes
are close.

A size a neighbour's driver refused counts as far below that neighbour's worst size that ran;
a size above a neighbour's maximum work-group size says nothing and is left out of the mean.

With ``fallback=True`` (method ``performance_knn+fixed``), the choice falls back to the best
fixed size (the one of the scenario's device where the training data has that device, else
the one over all training scenarios) unless the neighbours agree that the choice beats it:
the mean predicted gain must exceed ``margin`` times its standard error over the neighbours.
``performance_forest+novel`` (in ``forest``) sets ``novelty_``, a ``DeviceNovelty`` test, so
that this fallback applies only to scenarios unlike every kernel their device was measured with.

No scikit-learn: fitting stores standardised arrays and prediction is a few numpy operations
on them (tens of microseconds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perfport.wg.dataset import WgDataset
from perfport.wg.predictors.base import ANY_SIZE, WgPredictor, check_settings
from perfport.wg.predictors.novelty import CPU_CLASS, CPU_FEATURE, DeviceNovelty
from perfport.wg.predictors.vectors import fixed_order, performance_vectors


class WgPerformanceKnn(WgPredictor):
    """k-nearest-neighbour regression of the vector log(t_oracle / t_w) over all sizes w."""

    # Where set (by a subclass's fit), the fallback applies only to scenarios it finds novel.
    novelty_: DeviceNovelty | None = None
    # Where set (by a subclass), a CPU set-up training has not seen falls back to the best
    # fixed size over the training CPUs rather than over every device (mostly GPUs).
    cpu_class: bool = False
    cpu_fixed_: int | None = None
    cpu_order_: np.ndarray | None = None

    def __init__(
        self,
        k: int = 10,
        device_weight: float = 10.0,
        fallback: bool = False,
        margin: float = 2.0,
    ) -> None:
        self.k, self.device_weight, self.fallback, self.margin = k, device_weight, fallback, margin

    @property
    def name(self) -> str:
        return "performance_knn+fixed" if self.fallback else "performance_knn"

    def fit(self, data: WgDataset) -> WgPerformanceKnn:
        check_settings(
            self.k >= 1 and self.device_weight > 0 and self.margin >= 0,
            f"k >= 1, device_weight > 0, margin >= 0 (given {self.k}, {self.device_weight}, "
            f"{self.margin})",
        )
        self._fit_vectors(data)
        x = np.asarray(data.features, dtype=np.float64)
        self.mean_ = x.mean(0)
        scale = x.std(0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        self.weights_ = np.ones(x.shape[1])
        self.weights_[self.device_columns_] = self.device_weight
        self.points_ = (x - self.mean_) / self.scale_ * self.weights_
        return self

    def _fit_vectors(self, data: WgDataset) -> None:
        """What every vector method keeps: the training vectors and the best fixed sizes."""
        self._store_sizes(data)
        x = np.asarray(data.features, dtype=np.float64)
        self.vectors_ = performance_vectors(data)
        device = np.array([n.startswith("device_") for n in data.feature_names])
        self.device_columns_ = np.flatnonzero(device)
        # The fixed sizes best first (the first is the best fixed size): over all training
        # scenarios, per device the training data has (keyed by its features), over its CPUs.
        self.fixed_order_ = fixed_order(self.vectors_, np.ones(len(data), dtype=bool))
        self.fixed_ = _first(self.fixed_order_)
        self.device_order_: dict[bytes, np.ndarray] = {}
        if len(self.device_columns_):
            keys = [x[i, self.device_columns_].tobytes() for i in range(len(data))]
            for key in set(keys):
                rows = np.array([k == key for k in keys])
                self.device_order_[key] = fixed_order(self.vectors_, rows)
        self.device_fixed_ = {k: _first(v) for k, v in self.device_order_.items()}
        self.cpu_order_ = None
        if self.cpu_class and CPU_FEATURE in data.feature_names:
            cpu = x[:, data.feature_names.index(CPU_FEATURE)] == 1
            self.cpu_order_ = fixed_order(self.vectors_, cpu) if cpu.any() else None
            self.cpu_fixed_ = None if self.cpu_order_ is None else _first(self.cpu_order_)

    def neighbours(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(training rows, their weights): the k nearest, weighted by inverse distance."""
        point = (np.asarray(x, dtype=np.float64) - self.mean_) / self.scale_ * self.weights_
        distance = np.sqrt(((self.points_ - point) ** 2).sum(1))
        k = min(self.k, len(distance))
        nearest = np.argpartition(distance, k - 1)[:k] if k < len(distance) else np.arange(k)
        return nearest, 1.0 / (distance[nearest] + 1e-3)

    def predict_vector(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(predicted log relative performance per size, the neighbours' vectors, their
        weights); NaN where no neighbour has the size within its limits."""
        return self._vector(*self.neighbours(x))

    def neighbours_many(self, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """``neighbours`` of each row of ``x``."""
        return [self.neighbours(row) for row in x]

    def predict_vectors(self, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``predict_vector`` of each row of ``x``, the same values, the neighbours found for
        all rows at once (``neighbours_many``). The weighted means stay row by row: gathered
        into one array for all rows they cost more than alone (a forest row has hundreds of
        neighbours), and a matrix product would sum in another order and could change ties."""
        return [self._vector(rows, weights) for rows, weights in self.neighbours_many(x)]

    def _vector(
        self, nearest: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        vectors = self.vectors_[nearest]
        known = np.isfinite(vectors)
        total = (np.where(known, vectors, 0.0) * weights[:, None]).sum(0)
        mass = (known * weights[:, None]).sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            predicted = np.where(mass > 0, total / mass, np.nan)
        return predicted, vectors, weights

    def propose(self, x: np.ndarray, max_wg: int, refused: set[int]) -> int:
        candidates = self._candidates(max_wg, refused)
        if not len(candidates):
            return self.baseline_
        return self._choose(x, candidates, *self.predict_vector(x))

    def propose_many(
        self, x: np.ndarray, max_wg: Sequence[int], refused: Sequence[set[int]]
    ) -> list[int]:
        x = np.asarray(x, dtype=np.float64).reshape(len(max_wg), -1)
        candidates = [self._candidates(m, r) for m, r in zip(max_wg, refused, strict=True)]
        asked = [i for i, c in enumerate(candidates) if len(c)]
        if self.fallback and self.novelty_ is not None:
            self.novelty_.explain_many(x[asked])  # the fallback's test, row by row, kept
        out = [self.baseline_] * len(x)
        for i, vector in zip(asked, self.predict_vectors(x[asked]), strict=True):
            out[i] = self._choose(x[i], candidates[i], *vector)
        return out

    def propose_own(self, x: np.ndarray, max_wg: int, refused: set[int]) -> tuple[int, int]:
        vector = self.predict_vector(x)  # the costly part, shared by both choices
        return self._answer(x, max_wg, refused, vector), self._answer(x, ANY_SIZE, set(), vector)

    def propose_many_own(
        self, x: np.ndarray, max_wg: Sequence[int], refused: Sequence[set[int]]
    ) -> list[tuple[int, int]]:
        x = np.asarray(x, dtype=np.float64).reshape(len(max_wg), -1)
        if self.fallback and self.novelty_ is not None:
            self.novelty_.explain_many(x)  # the fallback's test, row by row, kept
        vectors = self.predict_vectors(x)
        return [
            (self._answer(row, m, r, v), self._answer(row, ANY_SIZE, set(), v))
            for row, m, r, v in zip(x, max_wg, refused, vectors, strict=True)
        ]

    def _answer(
        self,
        x: np.ndarray,
        max_wg: int,
        refused: set[int],
        vector: tuple[np.ndarray, np.ndarray, np.ndarray],
    ) -> int:
        candidates = self._candidates(max_wg, refused)
        return self._choose(x, candidates, *vector) if len(candidates) else self.baseline_

    def _choose(
        self,
        x: np.ndarray,
        candidates: np.ndarray,
        predicted: np.ndarray,
        vectors: np.ndarray,
        weights: np.ndarray,
    ) -> int:
        score = predicted[candidates]
        score = np.where(np.isfinite(score), score, -np.inf)
        best = int(candidates[int(np.argmax(score))])
        if not self.fallback or (self.novelty_ is not None and not self.novelty_.novel(x)):
            return best
        fixed = self._fixed_for(x, candidates)
        if fixed is None or fixed == best:
            return best
        # The gain of the choice over the fixed size, per neighbour that has both sizes.
        gain = vectors[:, best] - vectors[:, fixed]
        ok = np.isfinite(gain)
        if ok.sum() < 2:
            return best if ok.any() and gain[ok].mean() > 0 else fixed
        g, v = gain[ok], weights[ok]
        mean = np.average(g, weights=v)
        # Standard error of the weighted mean: weighted spread over the effective count.
        n = v.sum() ** 2 / (v**2).sum()
        spread = np.sqrt(np.average((g - mean) ** 2, weights=v) * len(g) / (len(g) - 1))
        return best if mean > self.margin * spread / np.sqrt(n) else fixed

    def _fixed_for(self, x: np.ndarray, candidates: np.ndarray | None = None) -> int | None:
        """The scenario's best fixed size; with ``candidates``, the best of those among them
        (None: none is), so a fixed size the scenario cannot use (too large for its data or
        device) gives way to the next one rather than to the unchecked choice."""
        if "fixed_order_" in self.__dict__:
            order = self._of_device(x, self.device_order_, self.cpu_order_, self.fixed_order_)
        else:  # a model fitted before the orders were kept: its one fixed size
            order = np.array([self._of_device(x, self.device_fixed_, self.cpu_fixed_, self.fixed_)])
        if candidates is None:
            return _first(order)
        usable = order[np.isin(order, candidates)]
        return int(usable[0]) if len(usable) else None

    def _of_device(self, x: np.ndarray, known: Mapping[bytes, Any], cpu: Any, overall: Any) -> Any:
        """``known``'s entry for the scenario's device where training had it, else ``cpu``
        for a CPU (with CPUs one class) where given, else ``overall``."""
        if len(self.device_columns_):
            device = np.asarray(x, dtype=np.float64)[self.device_columns_]
            if device.tobytes() in known:
                return known[device.tobytes()]
            is_cpu = self.novelty_ is not None and self.novelty_.key(device) == CPU_CLASS
            if is_cpu and cpu is not None:
                return cpu
        return overall


def _first(order: np.ndarray) -> int:
    return int(order[0]) if len(order) else 0
