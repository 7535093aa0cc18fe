"""Model files: written and read back, including those written before the work-group code
moved from perfport.models to perfport.wg; and the method registry."""

import pickle

import numpy as np
import pytest

from conftest import tiny_wg_dataset
from perfport.wg import METHODS, load_model, make_predictor, train
from perfport.wg.predictors import REGISTRY, WgPredictor

# Where each class lived before the move, as old model files name it.
_OLD = {
    "perfport.wg.model": "perfport.models.wgmodel",
    "perfport.wg.predictors.forest": "perfport.models.wgforest",
    "perfport.wg.predictors.k_nearest_neighbours": "perfport.models.wgvector",
    "perfport.wg.predictors.novelty": "perfport.models.wgnovelty",
    "perfport.wg.predictors.classifier": "perfport.models.wg",
}


def _data():
    rng = np.random.default_rng(1)
    names = [(d, k, "512") for d in ("cpu", "gpu") for k in ("synthetic", "heat", "sobel")]
    return tiny_wg_dataset(
        [[4, 4], [8, 4], [16, 4]], rng.uniform(1, 2, (6, 3)), names, rng.uniform(0, 1, (6, 2))
    )


@pytest.mark.parametrize("method", ["performance_forest+novel", "svm+baseline"])
def test_a_model_file_from_before_the_move_still_loads(tmp_path, method):
    pytest.importorskip("sklearn")
    data = _data()
    model = train(data, method)
    # Protocol 0 names each class as text ("c<module>\n<name>\n"): write the old modules.
    raw = pickle.dumps(model, protocol=0)
    for new, old in _OLD.items():
        raw = raw.replace(f"c{new}\n".encode(), f"c{old}\n".encode())
    assert b"perfport.models." in raw and b"perfport.wg." not in raw
    path = tmp_path / "old.model"
    path.write_bytes(b"perfport-wg-model-1\n" + raw)
    loaded = load_model(path)
    x = data.features[0]
    assert loaded.method == method
    assert loaded.predictor.propose(x, 1024, set()) == model.predictor.propose(x, 1024, set())


def test_every_method_name_builds_a_predictor_of_that_name():
    assert tuple(REGISTRY) == METHODS
    for name in METHODS:
        predictor = make_predictor(name, seed=3)
        assert isinstance(predictor, WgPredictor)
        assert predictor.name == name
    assert make_predictor("svm").name == "svm+nearest_neighbour"
    with pytest.raises(ValueError, match="unknown method"):
        make_predictor("svm+nowhere")
