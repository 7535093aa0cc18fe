"""What `novel` depends on, shown: the test compares a scenario only with training scenarios
whose device features are exactly its own, so one GPU through two backends that report
different limits (NVIDIA OpenCL's 48 KiB of local memory, CUDA's 227 KiB) is two devices with
two training sets, and can get two answers."""

from __future__ import annotations

import numpy as np

from perfport.wg import WgDataset
from perfport.wg.predictors.novelty import DeviceNovelty

GRID = np.array([(8, 4), (16, 4), (32, 4)])


def two_backends() -> WgDataset:
    """One GPU as two backends: 'opencl' measured 24 kernels, 'cuda' 12 of them (its feature
    spread over [0, 1] twice as sparsely); the device feature is its local memory."""
    kernel = np.r_[np.arange(24), np.arange(0, 24, 2)]
    local = np.r_[np.full(24, 15.58), np.full(12, 17.83)]
    features = np.column_stack([local, kernel / 23.0]).astype(float)
    n = len(kernel)
    return WgDataset(
        GRID, np.ones((n, len(GRID))), np.full(n, 1024), features,
        ("device_log2_local_mem", "kernel_x"), np.where(local < 16, "opencl", "cuda"),
        np.array([f"k{k}" for k in kernel]), np.full(n, "d"), np.zeros(n, dtype=bool),
    )  # fmt: skip


def test_the_explanation_names_the_device_scenarios_compared_with():
    novelty = DeviceNovelty().fit(two_backends())
    opencl, cuda = novelty.explain(np.array([15.58, 0.5])), novelty.explain(np.array([17.83, 0.5]))
    assert (opencl.device_scenarios, cuda.device_scenarios) == (24, 12)
    assert opencl.calibration == 24 and opencl.distance is not None
    assert opencl.novel == (opencl.pvalue < 0.05) == novelty.novel(np.array([15.58, 0.5]))
    assert set(opencl.to_json()) == {
        "pvalue",
        "alpha",
        "device_scenarios",
        "calibration",
        "distance",
        "scope",
    }
    assert opencl.scope == "device"  # no CPU among them


def test_one_kernel_two_backends_two_answers():
    # A kernel 1.5 kernel-spacings below the first, seen through both backends: the nearest
    # measured kernel is the same (k0) and as far; but OpenCL's kernels lie one spacing apart,
    # so this is farther than any of them from the next (novel), and CUDA's lie two apart (not).
    novelty = DeviceNovelty(alpha=0.1).fit(two_backends())
    kernel_x = -1.5 / 23.0
    opencl = novelty.explain(np.array([15.58, kernel_x]))
    cuda = novelty.explain(np.array([17.83, kernel_x]))
    assert opencl.distance == cuda.distance
    assert opencl.novel and not cuda.novel


def test_a_device_never_trained_on_is_novel_and_says_so():
    why = DeviceNovelty().fit(two_backends()).explain(np.array([16.0, 0.5]))
    assert why.novel and why.device_scenarios == 0 and why.distance is None
