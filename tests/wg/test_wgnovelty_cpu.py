"""CPUs as one device class (``performance_forest+novel_cpu``): a CPU set-up training has not
seen is compared with every training CPU, and falls back to the training CPUs' fixed size;
GPUs keep the exact device key, so their answers are the default model's."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.wg import METHODS, WgDataset, make_predictor
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.novelty import DeviceNovelty

GRID = np.array([(c, r) for c in (8, 16, 32, 64) for r in (1, 4)])
NAMES = ("device_is_cpu", "device_compute_units", "kernel_x", "data_log2_cells")
SETUPS = ((0.0, 132.0), (1.0, 16.0), (1.0, 2.0))  # a GPU, a 16-core and a 2-core CPU


def setups(n_kernels: int = 30, seed: int = 0) -> WgDataset:
    """Each set-up runs every kernel (one feature spread over [0, 1]) at two data sizes; the GPU
    runs best at column 2, the CPUs at column 5; the GPU has more scenarios than both CPUs, so
    the best fixed size over every device is the GPU's."""
    rng = np.random.default_rng(seed)
    rows = []
    for cpu, units in SETUPS:
        repeat = 1 if cpu else 3  # the GPU's scenarios thrice: it outweighs the two CPUs
        for _ in range(repeat):
            for k in range(n_kernels):
                for size in (9.0, 11.0):
                    rows.append((cpu, units, k / (n_kernels - 1), size, k))
    a = np.array(rows)
    t = 1.0 + 0.05 * rng.random((len(a), len(GRID)))
    cpu = a[:, 0] == 1
    t[~cpu, 2], t[cpu, 5] = 0.5, 0.5
    labels = np.array([f"{int(c)}-{int(u)}" for c, u in a[:, :2]])
    return WgDataset(
        GRID, t, np.full(len(a), 256), a[:, :4], NAMES, labels,
        np.array([f"k{int(k)}" for k in a[:, 4]]), a[:, 3].astype(str), np.ones(len(a), dtype=bool),
    )  # fmt: skip


NEW_CPU_NEAR = np.array([1.0, 32.0, 0.51, 9.0])  # a 32-core CPU, a kernel between measured ones
NEW_CPU_FAR = np.array([1.0, 32.0, 4.0, 9.0])  # a 32-core CPU, a kernel unlike every one


def test_a_new_cpu_is_compared_with_every_training_cpu():
    data = setups()
    exact = DeviceNovelty().fit(data).explain(NEW_CPU_NEAR)
    assert exact.novel and exact.device_scenarios == 0 and exact.scope == "device"
    grouped = DeviceNovelty(cpu_class=True).fit(data).explain(NEW_CPU_NEAR)
    assert not grouped.novel and grouped.scope == "cpu"
    assert grouped.device_scenarios == 120 and grouped.to_json()["scope"] == "cpu"
    assert DeviceNovelty(cpu_class=True).fit(data).novel(NEW_CPU_FAR)


def test_gpus_keep_the_exact_key():
    data = setups()
    exact, grouped = DeviceNovelty().fit(data), DeviceNovelty(cpu_class=True).fit(data)
    for x in (np.array([0.0, 132.0, 0.51, 9.0]), np.array([0.0, 132.0, 4.0, 11.0])):
        assert exact.explain(x) == grouped.explain(x)
    assert grouped.explain(np.array([0.0, 80.0, 0.5, 9.0])).device_scenarios == 0  # a new GPU


def test_a_new_cpu_gets_the_forest_or_the_cpus_fixed_size():
    data = setups()
    settings = {"trees": 20, "min_leaf": 2, "margin": 1e9, "seed": 1}
    default = WgPerformanceForest(fallback=True, novelty=0.05, **settings).fit(data)
    grouped = WgPerformanceForest(fallback=True, novelty=0.05, cpu_class=True, **settings).fit(data)
    assert grouped.name == "performance_forest+novel_cpu"
    # The default falls back to the fixed size over every device: the GPU's.
    assert default.propose(NEW_CPU_NEAR, 256, set()) == 2
    assert default.propose(NEW_CPU_FAR, 256, set()) == 2
    # Grouped: covered, so the forest's choice; novel, so the training CPUs' fixed size.
    assert grouped.propose(NEW_CPU_NEAR, 256, set()) == 5
    assert grouped.propose(NEW_CPU_FAR, 256, set()) == 5
    for s in np.flatnonzero(data.features[:, 0] == 0):  # every GPU scenario: the same answer
        x = data.features[s]
        assert grouped.propose(x, 256, set()) == default.propose(x, 256, set())


def test_a_model_saved_before_cpu_class_keeps_the_exact_key():
    novelty = DeviceNovelty(cpu_class=True).fit(setups())
    del novelty.__dict__["cpu_class"], novelty.__dict__["cpu_column_"]  # as an old pickle
    assert novelty.key(NEW_CPU_NEAR[:2]) == NEW_CPU_NEAR[:2].tobytes()


def test_the_method_is_registered_and_needs_the_novelty_test():
    assert "performance_forest+novel_cpu" in METHODS
    assert make_predictor("performance_forest+novel_cpu").name == "performance_forest+novel_cpu"
    # Checked at fit, as scikit-learn's estimators check their settings.
    unchecked = WgPerformanceForest(fallback=True, cpu_class=True)
    with pytest.raises(ValueError, match="cpu_class"):
        unchecked.fit(setups(2))


def test_the_last_explanation_is_reused_for_the_same_scenario_only():
    import pickle

    test = DeviceNovelty(cpu_class=True).fit(setups())
    near = test.explain(NEW_CPU_NEAR)
    assert test.explain(NEW_CPU_NEAR.copy()) is near  # the fallback's test, then the answer's
    far = test.explain(NEW_CPU_FAR)
    assert far.novel and not near.novel and test.explain(NEW_CPU_NEAR) == near
    assert "_last" not in pickle.loads(pickle.dumps(test)).__dict__  # models stay as saved
    refit = test.fit(setups(n_kernels=5))  # refitted: nothing remembered from before
    assert "_last" not in refit.__dict__
