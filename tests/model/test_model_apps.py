"""The paper's application kernels, written in loopy, agree with numpy on PoCL, and count and
build as perfport's other kernels do."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from model_support import LOOPY

from perfport.model import APPLICATIONS
from perfport.model.apps import run_on

pytest.importorskip("loopy", reason=LOOPY)


@pytest.fixture(scope="module")
def queue():
    import pyopencl as cl

    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        pytest.skip("no OpenCL device: pip install 'perfport[pocl]'")
    return cl.CommandQueue(cl.Context(devices[:1]))


def test_the_papers_eight_variants_are_built_in() -> None:
    dg = {"dg-plain", "dg-prefetch-u", "dg-prefetch-dm", "dg-prefetch-dm-tr"}
    assert {"matmul-prefetch", "matmul-noprefetch", "fd-16x16", "fd-18x18"} | dg == set(
        APPLICATIONS
    )


@pytest.mark.parametrize("name", sorted(APPLICATIONS))
def test_variants_agree_with_numpy(queue, name):
    app = APPLICATIONS[name]
    got, want = run_on(queue, app, app.small, seed=1)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_transposed_dg_variant_stores_element_fastest(queue):
    import pyopencl.array as cla

    app = APPLICATIONS["dg-prefetch-dm-tr"]
    inputs = app.inputs(32, np.random.default_rng(0))
    _, (res,) = app.make()(queue, **{k: cla.to_device(queue, v) for k, v in inputs.items()})
    assert res.strides[1] == res.dtype.itemsize  # k, the element, is the fastest axis


@pytest.mark.parametrize(
    ("name", "tag", "lid0_stride"),
    [("dg-prefetch-dm", "uDGD", 64), ("dg-prefetch-dm-tr", "uDGT", 1), ("fd-18x18", "uFD18", 1)],
)
def test_loads_keep_their_tags_and_strides(name, tag, lid0_stride):
    from perfport.model import gather

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = gather(APPLICATIONS[name].make())
    (load,) = [m for m in stats.mem if tag in m.tags]
    assert load.mtype == "global" and load.direction == "load"
    assert dict(load.lstrides)[0] == str(lid0_stride)


@pytest.mark.parametrize("name", ["dg-prefetch-u", "fd-16x16"])
def test_each_variant_becomes_a_measurable_spec(name):
    from perfport._core.records import Problem
    from perfport.model.measure import kernel_spec

    app = APPLICATIONS[name]
    spec = kernel_spec(app.make(), f"app-{name}", Problem.of({app.size: app.small}))
    assert spec.entry in spec.source and app.size in {a.name for a in spec.args}


@pytest.mark.parametrize("variant", ["prefetch-u", "prefetch-dm-tr"])
@pytest.mark.parametrize("tile", [8, 32])
def test_dg_variants_at_other_tiles_agree_with_numpy(queue, variant, tile):
    import dataclasses
    import functools

    from perfport.model.paper_kernels import dg_diff

    app = dataclasses.replace(
        APPLICATIONS[f"dg-{variant}"], make=functools.partial(dg_diff, variant, tile=tile)
    )
    got, want = run_on(queue, app, 64, seed=2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_dg_tile_that_does_not_divide_the_nodes_is_refused():
    from perfport.model.paper_kernels import dg_diff

    with pytest.raises(ValueError, match="divisor of 64"):
        dg_diff("plain", tile=12)
