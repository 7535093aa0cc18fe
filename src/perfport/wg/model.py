"""A trained work-group-size predictor on disk (the fitted predictor, the sizes it chooses
from, and the names of the features it expects), and the default model: the method of
docs/wg.md trained on the dataset perfport ships, trained on first use and cached.

Model files are pickles, so load only files you made or trust, as you would run their code.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import PerfportError, SpecError
from perfport._core.optional import require
from perfport._core.version import __version__
from perfport.wg.dataset import WgDataset, load_dataset
from perfport.wg.predictors import WgPredictor, make_predictor

_MAGIC = b"perfport-wg-model-1\n"
DEFAULT_METHOD = "performance_forest+novel"  # the method of the default model (docs/wg.md)
SHIPPED_DATASET = "wg/stencils.npz"  # the dataset perfport ships (see datasets/PROVENANCE.md)
CUMMINS_PILOT = "cummins-pilot"  # names Cummins' pilot data, found in the shared data folder
CUMMINS_PILOT_FILE = "cummins-omnitune-wgsize/simplebig_runtimes.csv"  # inside that folder
# Third-party data perfport may not redistribute (no licence stated): say where it is published.
CUMMINS_PILOT_WHERE = (
    "it is published as experiments/20150525-explore-simplebig/csv/runtimes.csv of "
    "github.com/ChrisCummins/msc-thesis (commit bc7403b); give that file to --data, or save it as "
    f"DIR/{CUMMINS_PILOT_FILE} and set PERFPORT_SHARED_DATA=DIR"
)

# Model files written before the work-group code moved to perfport.wg name its classes by
# their old modules; a model file is data that outlives a release, so they still load.
_MOVED_MODULES = {
    "perfport.models.wgmodel": "perfport.wg.model",
    "perfport.models.wg": "perfport.wg.predictors",
    "perfport.models.wgvector": "perfport.wg.predictors.k_nearest_neighbours",
    "perfport.models.wgforest": "perfport.wg.predictors.forest",
    "perfport.models.wgnovelty": "perfport.wg.predictors.novelty",
    "perfport.models.wgdata": "perfport.wg.dataset",
}


@dataclass(frozen=True)
class WgModel:
    method: str
    feature_names: tuple[str, ...]
    sizes: np.ndarray  # (W, 2)
    predictor: WgPredictor
    scenarios: int  # how many it was trained on

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(_MAGIC + pickle.dumps(self))


def is_model_file(path: str | Path) -> bool:
    """Whether ``path`` holds a model 'perfport wg train' wrote (it starts with the magic)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(_MAGIC)) == _MAGIC
    except OSError:
        return False


def train(data: WgDataset, method: str = DEFAULT_METHOD, seed: int = 0) -> WgModel:
    predictor = make_predictor(method, seed).fit(data)
    return WgModel(method, data.feature_names, data.sizes, predictor, len(data))


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(_MOVED_MODULES.get(module, module), name)


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
        model = _Unpickler(io.BytesIO(raw[len(_MAGIC) :])).load()
    except Exception as exc:
        raise SpecError(
            f"{path}: the model cannot be read ({type(exc).__name__}); train it again"
        ) from None
    if not isinstance(model, WgModel):
        raise SpecError(f"{path} does not hold a work-group model")
    return model


def shipped_dataset() -> Path:
    return Path(str(resources.files("perfport").joinpath("datasets", SHIPPED_DATASET)))


def dataset_path(name: str | None, shared_data: str | Path | None = None) -> Path:
    """The dataset ``name`` names: the shipped one for None, Cummins' pilot data for
    ``cummins-pilot`` (in ``shared_data``, the folder ``PERFPORT_SHARED_DATA`` names), else
    the path itself. Never searched for relative to the working directory: a command must not
    work or fail by where the user stands."""
    if name is None:
        return shipped_dataset()
    if name != CUMMINS_PILOT:
        return Path(name)
    if not shared_data:
        raise PerfportError(f"Cummins' pilot data is not shipped: {CUMMINS_PILOT_WHERE}")
    path = Path(shared_data) / CUMMINS_PILOT_FILE
    if not path.is_file():
        raise PerfportError(
            f"no {path} (PERFPORT_SHARED_DATA={shared_data}): {CUMMINS_PILOT_WHERE}"
        )
    return path


def default_model(cache_dir: Path, announce: Callable[[str], None] | None = None) -> WgModel:
    """``DEFAULT_METHOD`` trained on the shipped dataset: trained on first use (a few seconds;
    ``announce`` hears why the caller waits) and cached in ``cache_dir`` (pickles are tied to
    the library versions that wrote them, which are part of the cache key)."""
    sklearn = require("sklearn", "models", "Work-group-size models")
    data = shipped_dataset()
    digest = hashlib.sha256(data.read_bytes()).hexdigest()[:12]
    cached = (
        cache_dir / f"wg-{DEFAULT_METHOD}-{digest}-{__version__}-sklearn{sklearn.__version__}.pkl"
    )
    if cached.is_file():
        return load_model(cached)
    if announce is not None:
        announce("training the default work-group model on the shipped data (once)...")
    model = train(load_dataset(data), DEFAULT_METHOD)
    with contextlib.suppress(OSError):  # no cache is slower, not wrong
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = cached.with_suffix(f".tmp{os.getpid()}")
        model.save(staging)
        os.replace(staging, cached)
    return model


def model_or_default(
    path: str | Path | None, cache_dir: Path, announce: Callable[[str], None] | None = None
) -> WgModel:
    """The model at ``path``, or where none is given, the default model."""
    return load_model(path) if path else default_model(cache_dir, announce)
