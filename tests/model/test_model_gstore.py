"""The ``gstore_pattern`` generator: global stores at a lid(0) stride with no global load (the
values come from the work-item ids), counted by loopy as such, and correct on PoCL."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from model_support import LOOPY

from perfport.cli import main
from perfport.model.collection import KernelCollection

pytest.importorskip("loopy", reason=LOOPY)


def _kernel(stride: int, n_arrays: int, nel: int = 1024, dtype: str = "float32"):
    from perfport.model.generators import all_generators

    tags = ["gstore_pattern", f"dtype:{dtype}", f"lid_stride_0:{stride}",
            f"n_arrays:{n_arrays}", f"nel:{nel}"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k,) = KernelCollection(all_generators()).generate_kernels(tags)
    return k


@pytest.mark.parametrize(("stride", "n_arrays"), [(1, 1), (2, 4), (4, 2)])
def test_stores_are_counted_at_their_stride_and_nothing_is_loaded(stride, n_arrays):
    from perfport.model import FeatureSet, gather

    k = _kernel(stride, n_arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = gather(k.program).evaluate(k.sizes)
    features = FeatureSet()
    at = features.value(f"f_mem_access_global_float32_store_lstrides:{{0:{stride}}}", stats)
    assert at == n_arrays * 1024
    assert features.value("f_mem_access_global_float32_store", stats) == at
    assert features.value("f_mem_access_global_float32_load", stats) == 0
    assert features.value("f_mem_access_local_float32", stats) == 0
    assert all(m.pattern.direction == "store" for m in stats.mem)
    # no float arithmetic either: p_madd and p_add stay out of this kernel's time
    assert features.value("f_op_float32_madd", stats) == 0
    assert features.value("f_op_float32_add", stats) == 0


def test_every_family_tag_selects_it():
    from perfport.model.generators import all_generators

    collection = KernelCollection(all_generators())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernels = collection.generate_kernels(["gstore", "dtype:float32", "nel:1024"])
    # lid_stride_0 1, 2, 4 times n_arrays 1, 2, 4
    assert len(kernels) == 9
    assert {k.generator for k in kernels} == {"gstore_pattern"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_it_writes_the_ids_it_says_on_pocl(dtype):
    cl = pytest.importorskip("pyopencl")
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    stride, n_arrays, nel = 2, 2, 512
    k = _kernel(stride, n_arrays, nel, dtype)
    outs = [np.full(stride * nel, -1, dtype=dtype) for _ in range(n_arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, got = k.program(queue, nel=nel, **{f"out{i}": o for i, o in enumerate(outs)})
    g = np.arange(nel)
    # work-item g of group g // 256 writes word 2 (g % 256) + 512 (g // 256) = 2 g; the gaps
    # between stay as they were
    for i, out in enumerate(got):
        out = out.get() if hasattr(out, "get") else out
        expected = np.full(stride * nel, -1, dtype=dtype)
        expected[stride * g] = g + i
        np.testing.assert_array_equal(out, expected)


def test_collect_measures_it_on_pocl(tmp_path, capsys):
    pytest.importorskip("pyopencl")
    argv = ["model", "collect", "--filter", "gstore_pattern", "dtype:float32",
            "lid_stride_0:1,2", "n_arrays:1", "nel:65536", "--db", str(tmp_path / "c.db"),
            "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == {"measured": 2, "stored": 0, "failed": 0}
    assert all(r["time_ms"] > 0 for r in report["results"])
