"""A trained work-group-size predictor on disk: the fitted predictor, the sizes it chooses
from, and the names of the features it expects.

Model files are pickles, so load only files you made or trust, as you would run their code.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfport._core import SpecError
from perfport.models.wg import WgPredictor, make_predictor
from perfport.models.wgdata import WgDataset

_MAGIC = b"perfport-wg-model-1\n"


@dataclass(frozen=True)
class WgModel:
    method: str
    feature_names: tuple[str, ...]
    sizes: np.ndarray  # (W, 2)
    predictor: WgPredictor
    scenarios: int  # how many it was trained on

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(_MAGIC + pickle.dumps(self))


def train(data: WgDataset, method: str = "performance_forest+novel", seed: int = 0) -> WgModel:
    predictor = make_predictor(method, seed).fit(data)
    return WgModel(method, data.feature_names, data.sizes, predictor, len(data))


def load_model(path: str | Path) -> WgModel:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SpecError(
            f"cannot read model {path} ({exc.strerror}); train one with 'perfport wg train'"
        ) from None
    if not raw.startswith(_MAGIC):
        raise SpecError(
            f"{path} is not a perfport work-group model; train one with 'perfport wg train'"
        )
    try:
        model = pickle.loads(raw[len(_MAGIC) :])
    except Exception as exc:
        raise SpecError(
            f"{path}: the model cannot be read ({type(exc).__name__}); train it again"
        ) from None
    if not isinstance(model, WgModel):
        raise SpecError(f"{path} does not hold a work-group model")
    return model
