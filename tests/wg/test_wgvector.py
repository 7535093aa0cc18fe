"""The performance-vector predictors (performance_knn, performance_forest): they must find
known answers, never propose a size that is too large or refused, and fall back to the fixed
size when unsure."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import numpy as np
import pytest

from perfport.wg import METHODS, WgDataset, WgPerformanceKnn, evaluate, make_predictor
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.vectors import performance_vectors as _performance_vectors

PREDICTORS = {"performance_knn": WgPerformanceKnn, "performance_forest": WgPerformanceForest}

GRID = np.array([(c, r) for c in (4, 8, 16, 32, 64) for r in (1, 2, 4, 8)])
AREA = GRID[:, 0] * GRID[:, 1]


def two_devices(n: int = 80, seed: int = 0, noise: float = 0.0) -> WgDataset:
    """Device 0 (max 256) is fastest at w(64x4) for wide data and w(16x4) for narrow data;
    device 1 (max 128) at w(8x8) everywhere but refuses every size with 2 rows."""
    rng = np.random.default_rng(seed)
    device = np.arange(n) % 2
    width = rng.choice([512, 1024, 2048, 4096], size=n)
    max_wg = np.where(device == 0, 256, 128)
    best_c = np.where(device == 0, np.where(width >= 2048, 64, 16), 8)
    best_r = np.where(device == 0, 4, 8)
    t = 1.0 + 0.5 * np.abs(np.log2(GRID[None, :, 0] / best_c[:, None]))
    t = t + 0.5 * np.abs(np.log2(GRID[None, :, 1] / best_r[:, None]))
    t = t * (1.0 + noise * rng.standard_normal(t.shape)) * width[:, None] / 1024.0
    t[AREA[None, :] > max_wg[:, None]] = np.nan
    t[(device == 1)[:, None] & (GRID[None, :, 1] == 2)] = np.nan
    features = np.column_stack([device, max_wg, np.log2(width)]).astype(float)
    return WgDataset(
        GRID, t, max_wg, features, ("device_kind", "device_max_wg", "data_log2_width"),
        device.astype(str), np.array([f"k{i % 4}" for i in range(n)]), width.astype(str),
        np.arange(n) % 4 != 0,
    )  # fmt: skip


def column(wc: int, wr: int) -> int:
    return int(np.flatnonzero((GRID[:, 0] == wc) & (GRID[:, 1] == wr))[0])


def sized(name: str, fallback: bool = False) -> WgPerformanceKnn:
    """A predictor sized for the small test datasets."""
    if name == "performance_knn":
        return WgPerformanceKnn(k=3, fallback=fallback)
    return WgPerformanceForest(trees=20, min_leaf=2, fallback=fallback)


@pytest.mark.parametrize("name", PREDICTORS)
def test_registered(name):
    assert {name, f"{name}+fixed"} <= set(METHODS)
    assert isinstance(make_predictor(name), PREDICTORS[name])
    assert make_predictor(name).name == name
    assert make_predictor(f"{name}+fixed").fallback
    if name == "performance_forest":
        assert make_predictor(name, seed=3).seed == 3  # evaluate's seed reaches the forest


@pytest.mark.parametrize("name", PREDICTORS)
@pytest.mark.parametrize("fallback", [False, True])
def test_finds_the_known_best_size_of_unseen_scenarios(name, fallback):
    data = two_devices()
    train, test = np.arange(60), np.arange(60, 80)
    model = sized(name, fallback).fit(data.subset(train))
    for s in test:
        chosen = model.propose(data.features[s], int(data.max_wg[s]), set())
        assert chosen == data.oracle[s], (s, GRID[chosen], GRID[data.oracle[s]])
    (result,) = evaluate(data, [f"{name}+fixed" if fallback else name], ["10-fold"])
    assert result.performance == pytest.approx(1.0) and result.accuracy == 1.0
    assert result.speedup_over_baseline > 1.1 and result.validity == 1.0 and result.refused == 0.0


@pytest.mark.parametrize("name", PREDICTORS)
def test_never_proposes_too_large_or_refused_sizes(name):
    data = two_devices()
    model = sized(name).fit(data.subset(np.arange(60)))
    x, best = data.features[61], column(8, 8)  # device 1, limit 128
    assert model.propose(x, 128, set()) == best
    # A smaller limit masks w(8x8) and everything larger.
    small = model.propose(x, 32, set())
    assert AREA[small] <= 32
    # Refused sizes are skipped, best first: the next best is one step from w(8x8).
    refused: set[int] = set()
    for _ in range(5):
        w = model.propose(x, 128, refused)
        assert w not in refused and AREA[w] <= 128
        refused.add(w)
    assert column(8, 8) in refused and len(refused) == 5
    # Nothing left: the baseline, as the other predictors do.
    everything = set(range(len(GRID)))
    assert model.propose(x, 128, everything) == model.baseline_


def test_refused_sizes_of_the_training_data_count_as_bad():
    data = two_devices()
    vectors = _performance_vectors(data)
    device1 = np.flatnonzero(data.device == "1")
    rows2 = np.flatnonzero(GRID[:, 1] == 2)
    too_large = np.flatnonzero(AREA > 128)
    ran = np.isfinite(data.runtimes[device1])
    worst = np.nanmin(np.where(ran, vectors[device1], np.nan), axis=1)
    refused = vectors[np.ix_(device1, rows2[AREA[rows2] <= 128])]
    assert (refused < worst[:, None]).all()  # refused: below the worst size that ran
    assert np.isnan(vectors[np.ix_(device1, too_large)]).all()  # too large: unknown
    # So a device-1 scenario never gets a size its neighbours' driver refused, even when the
    # refused size is otherwise the fastest: make w(8x2) refused but tempting on device 0.
    model = WgPerformanceKnn(k=4).fit(data)
    scores, _, _ = model.predict_vector(data.features[device1[0]])
    assert scores[rows2[AREA[rows2] <= 128]].max() < np.nanmax(scores)
    assert GRID[model.propose(data.features[device1[0]], 128, set())][1] != 2


def test_fallback_takes_the_device_fixed_size_when_neighbours_disagree():
    # One device; the neighbours' best sizes are scattered by noise: no size reliably beats
    # the fixed best, so the safe variant keeps it while the plain one follows the noise.
    rng = np.random.default_rng(3)
    n = 40
    t = 1.0 + 0.02 * rng.standard_normal((n, len(GRID)))
    fixed = column(16, 4)
    t[:, fixed] = 0.985  # always good, rarely the very best
    features = np.column_stack([np.zeros(n), rng.standard_normal(n)])
    data = WgDataset(
        GRID, t, np.full(n, 256), features, ("device_kind", "data_x"), np.zeros(n).astype(str),
        np.array(["k"] * n), np.array(["d"] * n), np.ones(n, dtype=bool),
    )  # fmt: skip
    safe = WgPerformanceKnn(k=10, fallback=True).fit(data)
    plain = WgPerformanceKnn(k=1).fit(data)
    assert safe._fixed_for(features[0]) == fixed
    probes = rng.standard_normal((20, 2))
    probes[:, 0] = 0.0
    assert all(safe.propose(p, 256, set()) == fixed for p in probes)
    assert any(plain.propose(p, 256, set()) != fixed for p in probes)
    # Where the fixed size is refused, the safe variant still answers with a legal size.
    assert safe.propose(probes[0], 256, {fixed}) != fixed


def test_fallback_to_a_fixed_size_takes_the_next_one_the_scenario_can_use():
    # The fixed size was dropped when the scenario could not use it (too wide for its data,
    # beyond its device): the unchecked choice answered instead of the next fixed size.
    rng = np.random.default_rng(3)
    n = 40
    t = 1.0 + 0.02 * rng.standard_normal((n, len(GRID)))
    fixed, second = column(16, 4), column(8, 8)
    t[:, fixed], t[:, second] = 0.98, 0.985  # always good, rarely the very best
    features = np.column_stack([np.zeros(n), rng.standard_normal(n)])
    data = WgDataset(
        GRID, t, np.full(n, 256), features, ("device_kind", "data_x"), np.zeros(n).astype(str),
        np.array(["k"] * n), np.array(["d"] * n), np.ones(n, dtype=bool),
    )  # fmt: skip
    safe = WgPerformanceKnn(k=10, fallback=True).fit(data)
    probes = rng.standard_normal((20, 2))
    probes[:, 0] = 0.0
    assert all(safe.propose(p, 256, set()) == fixed for p in probes)
    assert all(safe.propose(p, 256, {fixed}) == second for p in probes)
    assert safe._fixed_for(probes[0], np.array([second, fixed])) == fixed
    assert safe._fixed_for(probes[0], np.array([second])) == second


def test_fixed_size_is_per_device_where_the_device_is_known():
    data = two_devices()
    model = WgPerformanceKnn(fallback=True).fit(data)
    d0, d1 = data.features[0], data.features[1]
    assert AREA[model._fixed_for(d1)] <= 128 and GRID[model._fixed_for(d1)][1] != 2
    assert model._fixed_for(d0) != model._fixed_for(d1)
    unknown = np.array([5.0, 512.0, 11.0])
    assert model._fixed_for(unknown) == model.fixed_


def test_rejects_bad_settings():
    # At fit, as scikit-learn's estimators check theirs: the constructor only stores them.
    data = two_devices(n=4)
    with pytest.raises(ValueError, match="k >= 1"):
        WgPerformanceKnn(k=0).fit(data)
    with pytest.raises(ValueError, match="device_weight > 0"):
        WgPerformanceKnn(device_weight=0.0).fit(data)
    for bad in ({"trees": 0}, {"min_leaf": 0}, {"max_features": 0.0}, {"margin": -1.0}):
        with pytest.raises(ValueError, match="trees >= 1"):
            WgPerformanceForest(**bad).fit(data)


def test_forest_walks_its_trees_as_scikit_learn_does():
    # The numpy walk must put every training scenario in the leaf scikit-learn's apply() did,
    # including features that float32 rounds (scikit-learn compares in float32).
    data = two_devices(noise=0.05)
    features = data.features.copy()
    features[:, 2] += 1e-9 * np.arange(len(data))
    data = WgDataset(
        data.sizes, data.runtimes, data.max_wg, features, data.feature_names, data.device,
        data.kernel, data.dataset, data.synthetic,
    )  # fmt: skip
    forest = WgPerformanceForest(trees=15, min_leaf=1, seed=4).fit(data)
    walked = np.array([forest.leaves(x) for x in data.features]).T
    assert (walked == forest.leaves_).all()
    rows, weights = forest.neighbours(data.features[7])
    assert weights.sum() == pytest.approx(1.0) and (weights > 0).all()
    # Only scenarios that share a leaf with it in some tree, each in proportion to its share.
    shares = forest.counts_ * (forest.leaves_ == walked[:, [7]])
    assert set(rows) == set(np.flatnonzero(shares.sum(0) > 0))
    # Each weight is the scenario's share of its leaf's bootstrap weight, averaged over trees
    # (the leaf members the forest indexes at its first prediction give exactly these).
    for row in (0, 7, len(data) - 1):
        shares = forest.counts_ * (forest.leaves_ == walked[:, [row]])
        dense = (shares / shares.sum(1, keepdims=True)).sum(0) / forest.trees
        rows, weights = forest.neighbours(data.features[row])
        assert np.allclose(weights, dense[rows]) and set(rows) == set(np.flatnonzero(dense))
    assert "_members" not in pickle.loads(pickle.dumps(forest)).__dict__  # derived, not saved


def test_forest_neighbours_follow_the_features_that_matter():
    # Data width decides device 0's best size, a noise feature decides nothing: the forest
    # splits on width, so its neighbours of a wide device-0 scenario are wide device-0 ones,
    # however far their noise feature lies.
    data = two_devices(n=120)
    rng = np.random.default_rng(1)
    features = np.column_stack([data.features, 100.0 * rng.standard_normal(len(data))])
    data = WgDataset(
        data.sizes, data.runtimes, data.max_wg, features, (*data.feature_names, "noise"),
        data.device, data.kernel, data.dataset, data.synthetic,
    )  # fmt: skip
    forest = WgPerformanceForest(trees=30, min_leaf=3).fit(data)
    wide = np.flatnonzero((data.features[:, 0] == 0) & (data.features[:, 2] >= 11))
    rows, weights = forest.neighbours(data.features[wide[0]])
    same = np.isin(rows, wide)
    assert weights[same].sum() > 0.95


@pytest.mark.parametrize("fallback", [{}, {"fallback": True, "novelty": 0.05}])
def test_a_fitted_forest_holds_no_scikit_learn_objects(fallback):
    # So a saved default model loads and predicts where scikit-learn is not installed.
    forest = WgPerformanceForest(trees=5, **fallback).fit(two_devices())
    assert b"sklearn" not in pickle.dumps(forest)


@pytest.mark.parametrize(
    "name", ["performance_knn+fixed", "performance_forest+fixed", "performance_forest+novel"]
)
def test_predicts_in_well_under_a_millisecond_on_the_shipped_data(name):
    from perfport.wg import load_dataset

    shipped = Path(__file__).parents[2] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"
    data = load_dataset(shipped)
    model = make_predictor(name).fit(data)
    times = []
    for s in range(0, len(data), 3):
        started = time.perf_counter()
        model.propose(data.features[s], int(data.max_wg[s]), set())
        times.append(time.perf_counter() - started)
    assert np.median(times) * 1000.0 < 1.0
