"""The conformal novelty test per device, and performance_forest+novel, which falls back to
the fixed size only for scenarios the test finds novel."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.wg import METHODS, WgDataset, make_predictor
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.novelty import DeviceNovelty

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


def line(kernels: int, sizes: tuple[float, ...] = (9.0, 9.1), odd: float = 0.0) -> WgDataset:
    """One device; kernels 0, 1, 2, ... (one kernel feature) each at the given data sizes,
    shifted by ``odd`` for the odd kernels."""
    k = np.repeat(np.arange(kernels), len(sizes)).astype(float)
    size = np.tile(sizes, kernels) + odd * (k % 2)
    n = len(k)
    return WgDataset(
        GRID, np.ones((n, len(GRID))), np.full(n, 256), np.column_stack([np.zeros(n), k, size]),
        ("device_kind", "kernel_x", "data_log2_cells"), np.full(n, "d"),
        np.array([f"k{int(v)}" for v in k]), size.astype(str), np.ones(n, dtype=bool),
    )  # fmt: skip


def test_calibration_leaves_out_the_kernel_not_only_the_scenario():
    # Each kernel's two scenarios lie very close together; the nearest other kernel (two
    # steps on, the odd ones run at other sizes) is farther. The calibration distances are
    # those between kernels, so a new kernel half a step from a measured one is covered; it
    # would be novel against the distances within a kernel.
    novelty = DeviceNovelty().fit(line(30, odd=10.0))
    assert novelty.pvalue(np.array([0.0, 14.5, 9.0])) == 1.0
    # Farther than every calibration distance: the smallest p-value, 1 / (n + 1).
    assert novelty.pvalue(np.array([0.0, 40.0, 9.0])) == pytest.approx(1 / 61)


def test_too_few_calibration_distances_never_find_a_scenario_novel():
    # 2 kernels x 5 sizes: 10 calibration distances, so the smallest p-value is 1/11 > 0.05.
    novelty = DeviceNovelty().fit(line(2, (9.0, 9.1, 9.2, 9.3, 9.4)))
    assert novelty.pvalue(np.array([0.0, 1000.0, 9.0])) == pytest.approx(1 / 11)
    assert not novelty.novel(np.array([0.0, 1000.0, 9.0]))
    # One kernel: nothing to calibrate with, so every scenario is novel.
    assert DeviceNovelty().fit(line(1)).novel(np.array([0.0, 0.0, 9.0]))


def test_novel_scenarios_fall_back_and_covered_ones_do_not():
    # Kernels above 0.8 run best at one size, the others at another, which is the device's
    # fixed size; with a huge margin the fallback always takes the fixed size, so the rules
    # differ exactly where the gate decides.
    data = kernels()
    high = data.features[:, 1] > 0.8
    t = data.runtimes.copy()  # noise in [1, 1.05]; the fixed size's test needs a spread
    t[~high, 2], t[high, 5] = 0.5, 0.5
    data = WgDataset(
        data.sizes, t, data.max_wg, data.features, data.feature_names, data.device,
        data.kernel, data.dataset, data.synthetic,
    )  # fmt: skip
    assert "performance_forest+novel" in METHODS
    assert make_predictor("performance_forest+novel").name == "performance_forest+novel"
    settings = {"trees": 20, "min_leaf": 2, "margin": 1e9, "seed": 1}
    gated = WgPerformanceForest(fallback=True, novelty=0.05, **settings).fit(data)
    plain = WgPerformanceForest(**settings).fit(data)
    fixed = WgPerformanceForest(fallback=True, **settings).fit(data)
    covered = [np.array([1.0, v, 9.0]) for v in np.linspace(0.85, 1.0, 5)]  # device 1
    far = [np.array([1.0, v, 9.0]) for v in np.linspace(3.0, 4.0, 5)]
    for x in covered:
        assert not gated.novelty_.novel(x)
        assert gated.propose(x, 256, set()) == plain.propose(x, 256, set()) == 5
    for x in far:
        assert gated.novelty_.novel(x)
        assert gated.propose(x, 256, set()) == fixed.propose(x, 256, set()) == 2
        assert plain.propose(x, 256, set()) == 5


def test_novelty_needs_the_fallback_and_a_level():
    for bad in ({"novelty": 0.05}, {"fallback": True, "novelty": 1.5}):
        with pytest.raises(ValueError):  # at fit: the constructor only stores its arguments
            WgPerformanceForest(**bad).fit(line(2))
    with pytest.raises(ValueError, match="unknown method"):
        make_predictor("performance_knn+novel")
