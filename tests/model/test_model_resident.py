"""``f_barrier_exposed`` (``perfport.model.resident``): work-items x local barriers per
work-item / work-groups resident per compute unit, from an architecture's limits; 0 where
the device's limits are not listed."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import pytest
from model_support import LOOPY

from perfport.model import FeatureSet, KernelStats, Model, ModelError, gather, input_features
from perfport.model.collection import KernelCollection
from perfport.model.resident import HOPPER, ResidencyLimits, limits_for

RESIDENT_MODEL = (
    Path(__file__).parents[2] / "src/perfport/datasets/model/paper-linear-resident.json"
)
H200, POCL = "NVIDIA H200", "cpu-AMD EPYC 7B13 64-Core Processor"


@pytest.mark.parametrize(
    ("group", "local", "resident"),
    [
        (64, 512, 32),  # the groups-per-SM limit
        (256, 2048, 8),  # threads: 2048 / 256
        (324, 1296, 5),  # 324 work-items take 11 whole warps (352 slots)
        (900, 3600, 2),
        (1024, 8192, 2),
        (256, 48 * 1024, 4),  # local memory: 228 KiB / (48 + 1 reserved) KiB
        (32, 0, 32),
    ],
)
def test_resident_groups_per_sm_on_hopper(group: int, local: int, resident: int) -> None:
    assert HOPPER.resident(group, local) == resident


def test_limits_are_known_per_architecture_only() -> None:
    for name in ("NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA GH200 480GB"):
        assert limits_for(name) is HOPPER
    for name in (POCL, "NVIDIA GeForce RTX 4090", "AMD Instinct MI300X", "H200", ""):
        assert limits_for(name) is None


def _stride_kernel(lsize: int, nel: int) -> Any:
    from perfport.model.generators import all_generators

    tags = ["lmem_stride_pattern", "dtype:float32", "lid_stride_0:1", f"lsize_0:{lsize}",
            "lsize_1:1", "m:4", f"nel:{nel}"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k,) = KernelCollection(all_generators()).generate_kernels(tags)
        return gather(k.program).evaluate(k.sizes)


@pytest.mark.parametrize(("lsize", "resident"), [(128, 16), (512, 4)])
def test_the_feature_counts_work_items_times_barriers_over_resident_groups(
    lsize: int, resident: int
) -> None:
    pytest.importorskip("loopy", reason=LOOPY)
    nel = 4 * lsize
    stats = _stride_kernel(lsize, nel)
    # one barrier per work-item; the local array is 2 x lsize floats (lsize + 8 words filled)
    assert stats.local_mem_bytes == 2 * lsize * 4
    features = FeatureSet()
    assert features.value("f_barrier_exposed", stats, H200) == nel * 1 / resident
    assert features.value("f_barrier_exposed", stats, POCL) == 0.0
    assert features.value("f_barrier_exposed", stats) == 0.0


def test_no_barrier_no_exposure_and_old_statistics_are_refused() -> None:
    pytest.importorskip("loopy", reason=LOOPY)
    stats = _stride_kernel(256, 1024)
    no_barrier = dataclasses.replace(
        stats, sync=tuple((k, 0.0 if k.value == "barrier_local" else v) for k, v in stats.sync)
    )
    assert FeatureSet().value("f_barrier_exposed", no_barrier, H200) == 0.0
    old = dataclasses.replace(stats, local_mem_bytes=None)
    with pytest.raises(ModelError, match="gather them again"):
        FeatureSet().value("f_barrier_exposed", old, H200)
    # statistics read from JSON without the field are the old kind
    data = stats.stats.to_json()
    assert KernelStats.from_json(data).local_mem_bytes == "4 * (512)"
    del data["local_mem_bytes"]
    assert KernelStats.from_json(data).local_mem_bytes is None


def test_a_group_that_does_not_fit_is_refused() -> None:
    pytest.importorskip("loopy", reason=LOOPY)
    tiny = ResidencyLimits("tiny", threads=128, groups=4, local_bytes=1 << 16)
    from perfport.model import resident

    stats = _stride_kernel(256, 1024)
    with pytest.raises(ModelError, match="does not fit a compute unit of tiny"):
        resident.barrier_exposed(stats, tiny)


def test_the_resident_model_degrades_to_the_hoisted_one_where_limits_are_unknown() -> None:
    pytest.importorskip("loopy", reason=LOOPY)
    model = Model.load(RESIDENT_MODEL)
    assert "f_barrier_exposed" in model.features
    stats = _stride_kernel(1024, 2048)
    on_h200 = input_features(model, stats, device=H200)
    on_pocl = input_features(model, stats, device=POCL)
    assert on_h200["f_barrier_exposed"] == 2048 / 2
    assert on_pocl["f_barrier_exposed"] == 0.0
    assert {k: v for k, v in on_h200.items() if k != "f_barrier_exposed"} == {
        k: v for k, v in on_pocl.items() if k != "f_barrier_exposed"
    }
