"""The conformal novelty test per device, and performance_forest+novel, which falls back to
the fixed size only for scenarios the test finds novel."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.models import METHODS, WgDataset, make_predictor
from perfport.models.wgforest import WgPerformanceForest
from perfport.models.wgnovelty import DeviceNovelty

GRID = np.array([(c, r) for c in (8, 16, 32, 64) for r in (1, 4)])


def kernels(n: int = 120, seed: int = 0) -> WgDataset:
    """Two devices; 30 kernels each run at 2 data sizes, their one kernel feature spread over
    [0, 1]; the best size is noise around a device's favourite."""
    rng = np.random.default_rng(seed)
    device = np.arange(n) % 2
    kernel = (np.arange(n) // 2) % 30
    feature = kernel / 29.0
    size = np.where(np.arange(n) // 60 == 0, 9.0, 11.0)
    t = 1.0 + 0.05 * rng.random((n, len(GRID)))
    t[device == 0, 2] = 0.9
    features = np.column_stack([device, feature, size]).astype(float)
    return WgDataset(
        GRID, t, np.full(n, 256), features, ("device_kind", "kernel_x", "data_log2_cells"),
        device.astype(str), np.array([f"k{k}" for k in kernel]), size.astype(str),
        np.ones(n, dtype=bool),
    )  # fmt: skip


def test_near_kernels_are_covered_and_far_ones_novel():
    novelty = DeviceNovelty().fit(kernels())
    assert not novelty.novel(np.array([0.0, 0.51, 9.0]))  # between two measured kernels
    assert novelty.pvalue(np.array([1.0, 0.2, 11.0])) > 0.5  # a measured scenario
    assert novelty.novel(np.array([0.0, 3.0, 9.0]))  # far outside every kernel
    assert novelty.novel(np.array([2.0, 0.5, 9.0]))  # a device training has not seen


def test_pvalues_are_calibrated_for_a_kernel_left_out():
    # Leave each kernel out in turn: a kernel like the others is novel at 5% rarely.
    data = kernels()
    novel = []
    for k in range(30):
        train = np.flatnonzero(data.kernel != f"k{k}")
        novelty = DeviceNovelty().fit(data.subset(train))
        novel += [novelty.novel(x) for x in data.features[data.kernel == f"k{k}"]]
    assert np.mean(novel) <= 0.1


def test_labels_name_the_kernels_where_no_feature_does():
    data = kernels()
    unnamed = WgDataset(
        data.sizes, data.runtimes, data.max_wg, data.features, ("device_kind", "x", "cells"),
        data.device, data.kernel, data.dataset, data.synthetic,
    )  # fmt: skip
    novelty = DeviceNovelty().fit(unnamed)
    assert not novelty.novel(np.array([0.0, 0.51, 9.0]))
    assert novelty.novel(np.array([0.0, 3.0, 9.0]))


def test_rejects_a_level_outside_zero_one():
    for alpha in (0.0, 1.0):
        with pytest.raises(ValueError):
            DeviceNovelty(alpha)


def test_novel_scenarios_fall_back_and_covered_ones_do_not():
    data = kernels()
    assert "performance_forest+novel" in METHODS
    novel = make_predictor("performance_forest+novel")
    assert novel.name == "performance_forest+novel"
    settings = {"trees": 20, "min_leaf": 2, "seed": 1}
    gated = WgPerformanceForest(fallback=True, novelty=0.05, **settings).fit(data)
    plain = WgPerformanceForest(**settings).fit(data)
    fixed = WgPerformanceForest(fallback=True, **settings).fit(data)
    rng = np.random.default_rng(2)
    covered = [np.array([1.0, v, 9.0]) for v in rng.random(20)]
    far = [np.array([1.0, v, 9.0]) for v in 3.0 + rng.random(20)]
    assert all(gated.propose(x, 256, set()) == plain.propose(x, 256, set()) for x in covered)
    assert all(gated.propose(x, 256, set()) == fixed.propose(x, 256, set()) for x in far)
    # The two rules differ on some of these, or the test would show nothing.
    assert any(plain.propose(x, 256, set()) != fixed.propose(x, 256, set()) for x in covered + far)
