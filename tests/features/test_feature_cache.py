"""Kernel features are cached on disk per kernel source and types, so a scenario's second
prediction (in any process) does not compile; and the compile-free features need no compile
at all, so a model trained on them predicts without PoCL."""

import json
from importlib import resources

import numpy as np
import pytest

from perfport.features import (
    COMPILE_FREE_FEATURES,
    FEATURE_NAMES,
    FeatureCache,
    ir,
    scenario_features,
)
from perfport.features import vector as vector_module
from perfport.features.cache import feature_key
from perfport.kernels import described_stencil
from perfport.wg import load_dataset, predict_wg, train

pytest.importorskip("llvmlite")
CROSS = {"name": "cross_c", "body": "return (OUT)(GET(0, -1) + GET(0, 1));", "north": 1, "south": 1}
PROBLEM = {"width": 256, "height": 128}


def no_compile(*args, **kwargs):
    raise AssertionError("compiled although the features were cached or not needed")


def test_counts_survive_the_process_and_skip_the_compile(cpu, tmp_path, monkeypatch):
    cache = FeatureCache(tmp_path / "features")
    spec = described_stencil(CROSS)
    monkeypatch.setattr(ir, "_CACHE", {})  # nothing remembered from other tests
    first = scenario_features(spec, PROBLEM, cpu, cache)
    assert len(list((tmp_path / "features").glob("*.json"))) == 1
    ir._CACHE.clear()  # a new process: only the disk remembers
    monkeypatch.setattr(ir, "open_session", no_compile)
    again = scenario_features(spec, {"width": 999, "height": 77}, cpu, cache)  # any data size
    kernel = [i for i, n in enumerate(FEATURE_NAMES) if n.startswith("kernel_")]
    assert np.array_equal(first.as_array()[kernel], again.as_array()[kernel])


def test_the_key_is_the_source_and_the_types():
    spec = described_stencil(CROSS)
    defines = {"ELEM": "float", "OUT": "float", "NORTH": "1"}
    key = feature_key(spec, defines, ir.CLASS_NAMES)
    assert key == feature_key(described_stencil(CROSS), dict(defines), ir.CLASS_NAMES)
    assert key != feature_key(spec, {**defines, "ELEM": "int"}, ir.CLASS_NAMES)
    other = described_stencil({**CROSS, "body": "return (OUT)GET(0, 1);"})
    assert key != feature_key(other, defines, ir.CLASS_NAMES)


def test_a_damaged_entry_is_counted_afresh(cpu, tmp_path, monkeypatch):
    cache = FeatureCache(tmp_path)
    spec = described_stencil(CROSS)
    monkeypatch.setattr(ir, "_CACHE", {})
    scenario_features(spec, PROBLEM, cpu, cache)
    (entry,) = tmp_path.glob("*.json")
    good = json.loads(entry.read_text())
    for damage in ("{not json", json.dumps({"memory": -1}), json.dumps({**good, "memory": 1.5})):
        entry.write_text(damage)
        assert cache.get(entry.stem, ir.CLASS_NAMES) is None
    ir._CACHE.clear()
    scenario_features(spec, PROBLEM, cpu, cache)  # compiles again and repairs the entry
    assert json.loads(entry.read_text()) == good


def test_compile_free_features_and_a_model_on_them_need_no_compile(cpu, monkeypatch):
    monkeypatch.setattr(vector_module, "instruction_classes", no_compile)
    spec = described_stencil(CROSS)
    free = scenario_features(spec, PROBLEM, cpu, None, COMPILE_FREE_FEATURES)
    assert free.names == COMPILE_FREE_FEATURES and set(free.as_dict()) <= set(FEATURE_NAMES)
    assert free.as_dict()["kernel_north"] == 1.0
    path = resources.files("perfport.datasets") / "wg" / "stencils.npz"
    data = load_dataset(str(path)).with_features(COMPILE_FREE_FEATURES)
    model = train(data.subset(np.arange(0, len(data), 5)), "performance_knn")
    prediction = predict_wg(model, spec, PROBLEM, cpu)
    assert prediction.wg[0] * prediction.wg[1] <= cpu.max_work_group_size
    with pytest.raises(AssertionError, match="compiled"):  # a full model does compile
        scenario_features(spec, PROBLEM, cpu)
