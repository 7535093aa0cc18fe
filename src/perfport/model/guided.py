"""A calibrated model as the ranker of model-guided search (``strategies.ModelGuided``).

``ModelRanker`` predicts every configuration of a space from its loopy counts and a
calibration on the device's measurement kernels; as configurations are measured it
calibrates again on the measurement kernels plus those measurements, so the costs the
microbenchmarks got wrong for this kernel move towards what it shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from perfport.model.calibrate import Calibration, Measurement, calibrate, predict
from perfport.model.errors import ModelError
from perfport.model.model import Model


class ModelRanker:
    """``features[i]`` are the model's input features of configuration i (None where loopy
    cannot count it: never predicted, ranked last, left out of refits); ``base`` the device's
    measurement-kernel measurements (output in seconds); ``nonnegative``: every calibration
    with the costs bounded at 0. ``calibration`` (a calibration file's) is the first fit
    instead of one on ``base``; with no ``base`` a refit calibrates on the configurations
    measured alone, which succeeds once they are at least as many as the model's parameters
    (until then the last fit stays). ``unpredicted`` is told, once, each configuration the
    calibration cannot predict (ranked last) and why."""

    def __init__(
        self,
        model: Model,
        base: Sequence[Measurement],
        features: Sequence[Mapping[str, float] | None],
        device: str = "",
        nonnegative: bool = False,
        calibration: Calibration | None = None,
        unpredicted: Callable[[int, str], None] | None = None,
    ) -> None:
        self.model = model
        self.unpredicted = unpredicted
        self._told: set[int] = set()
        self.base = list(base)
        self.features = [None if f is None else dict(f) for f in features]
        self.device = device
        self.nonnegative = nonnegative
        self.refits = 0  # calibrations that succeeded after the first
        self.calibration_: Calibration = calibration or calibrate(
            model, self.base, device=device, allow_uninformed=True, nonnegative=nonnegative
        )

    def predict(self) -> np.ndarray:
        """Predicted seconds per configuration; NaN where the calibration cannot predict."""
        out = np.full(len(self.features), np.nan)
        for i, f in enumerate(self.features):
            if f is None:
                continue
            try:
                out[i] = predict(self.calibration_, f).value
            except ModelError as exc:  # overflow, or a division by a feature 0 for it
                if self.unpredicted is not None and i not in self._told:
                    self._told.add(i)
                    self.unpredicted(i, str(exc))
        return out

    def refit(self, measured: Mapping[int, float]) -> None:
        """Calibrate on the measurement kernels and the configurations measured (ms)."""
        extra = [
            Measurement(f"config-{i}", {}, f, t / 1e3)
            for i, t in sorted(measured.items())
            if t > 0 and (f := self.features[i]) is not None
        ]
        # The kernel's own measurements weigh as much as all the microbenchmarks together
        # (each repeated), so a few of them can overrule costs that do not fit this kernel.
        extra *= max(1, math.ceil(len(self.base) / len(extra))) if extra else 0
        try:
            self.calibration_ = calibrate(
                self.model,
                [*self.base, *extra],
                device=self.device,
                initial=self.calibration_.parameters,
                allow_uninformed=True,
                nonnegative=self.nonnegative,
            )
        except ModelError:
            return  # keep the last fit: a refit that fails must not stop the search
        self.refits += 1
