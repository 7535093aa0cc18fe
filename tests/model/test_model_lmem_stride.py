"""The ``lmem_stride_pattern`` generator: local loads at a lid(0) stride (the prefetching
application kernels' read patterns), counted by loopy as such, and correct on PoCL."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from model_support import LOOPY

from perfport.cli import main
from perfport.model.collection import KernelCollection

pytest.importorskip("loopy", reason=LOOPY)


def _kernel(stride: int, nel: int = 1024, m: int = 8, shape: tuple[str, ...] = ()):
    """The generator's kernel; ``shape`` adds work-group tags (``lsize_0:16 lsize_1:16``)."""
    from perfport.model.generators import all_generators

    tags = ["lmem_stride_pattern", "dtype:float32", f"lid_stride_0:{stride}", f"nel:{nel}",
            f"m:{m}", *shape]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k,) = KernelCollection(all_generators()).generate_kernels(tags)
    return k


@pytest.mark.parametrize("stride", [0, 1, 16])
def test_local_loads_are_counted_at_their_stride(stride):
    from perfport.model import FeatureSet, gather

    k = _kernel(stride)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = gather(k.program).evaluate(k.sizes)
    features = FeatureSet()
    # m loads per work-item, counted once per sub-group of 32 (as loopy counts local access)
    at = features.value(f"f_mem_access_local_float32_load_lstrides:{{0:{stride}}}", stats)
    assert at == 8 * 1024 / 32
    assert features.value("f_mem_access_local_float32_load", stats) == at
    assert features.value("f_sync_barrier_local", stats) == 1
    assert features.value("f_mem_access_global_float32_load", stats) == 1024


TWO_D = ("lsize_0:16", "lsize_1:16")


# loc[256 f + l] = a[group start + l] + f; the work-item whose lid(0) is l0 reads
# loc[16 l0 + k % 8] (1-D groups of 256: l0 = l; 16 x 16 groups: l0 = l % 16, lid(1) broadcast)
@pytest.mark.parametrize(("shape", "lanes"), [((), 256), (TWO_D, 16)])
def test_it_sums_the_words_it_says_on_pocl(shape: tuple[str, ...], lanes: int):
    cl = pytest.importorskip("pyopencl")
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    stride, nel, m = 16, 512, 12
    k = _kernel(stride, nel, m, shape)
    a = np.arange(nel, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, (out,) = k.program(queue, a=a, m=m, nel=nel)
    out = out.get() if hasattr(out, "get") else out
    expected = np.empty(nel, dtype=np.float32)
    for g in range(nel):
        start, l0 = g - g % 256, g % lanes
        words = [stride * l0 + q % 8 for q in range(m)]
        expected[g] = sum(a[start + w % 256] + w // 256 for w in words)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_collect_measures_it_on_pocl(tmp_path, capsys):
    pytest.importorskip("pyopencl")
    argv = ["model", "collect", "--filter", "lmem_stride_pattern", "dtype:float32",
            "lid_stride_0:0,16", "nel:1024", "m:8", "--db", str(tmp_path / "c.db"), "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == {"measured": 2, "stored": 0, "failed": 0}
    assert all(r["time_ms"] > 0 for r in report["results"])


def test_2d_work_groups_read_at_the_stride_with_lid1_a_broadcast():
    from perfport.model import FeatureSet, gather

    k = _kernel(16, shape=TWO_D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = gather(k.program)
    assert stats.work_group_size == "(16) * (16)"
    (load,) = [m for m in stats.mem if m.mtype == "local" and m.direction == "load"]
    assert dict(load.lstrides) == {0: "16", 1: "0"}
    at = stats.evaluate(k.sizes)
    assert (
        FeatureSet().value("f_mem_access_local_float32_load_lstrides:{0:16}", at) == 8 * 1024 / 32
    )


def test_collect_measures_2d_work_groups_on_pocl(tmp_path, capsys):
    pytest.importorskip("pyopencl")
    argv = ["model", "collect", "--filter", "lmem_stride_pattern", "dtype:float32",
            "lid_stride_0:16", "lsize_0:16", "lsize_1:16", "nel:1024", "m:8", "--db",
            str(tmp_path / "c.db"), "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == {"measured": 1, "stored": 0, "failed": 0}
