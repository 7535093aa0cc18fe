"""The work remover (section 7.1.1): the work-removed kernel keeps the tagged loads it was
told to keep, exactly, and loses the arithmetic, local memory and barriers; it runs on PoCL
and sums exactly the loads it kept."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from model_support import LOOPY, matmul_stats

from perfport.model.errors import ModelError

pytest.importorskip("loopy", reason=LOOPY)


def _stats(program):
    from perfport.model import gather

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gather(program)


def _pattern(m):
    return (m.mtype, m.direction, m.variable, m.tags, m.lstrides, m.gstrides, m.count)


@pytest.mark.parametrize(("app", "keep", "tag"), [("matmul-prefetch", "b", "bPF"),
                                                  ("matmul-noprefetch", "a", "aLD")])  # fmt: skip
def test_the_kept_load_is_unchanged_and_the_work_is_gone(app, keep, tag):
    from perfport.model.workremoval import make_removed

    original = matmul_stats()[app]
    removed = _stats(make_removed(app, keep))
    (before,) = [m for m in original.mem if tag in m.tags]
    loads = [m for m in removed.mem if m.direction == "load"]
    assert [_pattern(m) for m in loads] == [_pattern(before)]
    assert not [m for m in removed.mem if m.mtype == "local"]
    assert {s.kind.value for s in removed.sync} == {"kernel_launch"}
    assert {(o.dtype, o.op) for o in removed.ops if o.dtype == "float32"} == {("float32", "add")}
    assert ("float32", "madd") in {(o.dtype, o.op) for o in original.ops}


@pytest.fixture(scope="module")
def queue():
    import pyopencl as cl

    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        pytest.skip("no OpenCL device: pip install 'perfport[pocl]'")
    return cl.CommandQueue(cl.Context(devices[:1]))


def _run(queue, program, **inputs):
    _, (out,) = program(queue, out_host=True, **inputs)
    return out


def test_removed_kernels_run_and_sum_exactly_their_loads(queue):
    from perfport.model.workremoval import make_removed

    n = 32
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    # prefetching, keep b: each work-item sums b over its row of every k tile (k_outer)
    got = _run(queue, make_removed("matmul-prefetch", "b"), b=b)
    rows = np.arange(n) % 16
    want = sum(b[16 * ko + rows, :] for ko in range(n // 16))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # no prefetching, keep a: each work-item sums its row of a
    got = _run(queue, make_removed("matmul-noprefetch", "a"), a=a)
    np.testing.assert_allclose(got, np.repeat(a.sum(axis=1, keepdims=True), n, 1), rtol=1e-4)


@pytest.mark.parametrize("app", ["dg-prefetch-u", "fd-18x18"])
def test_every_application_has_a_work_removed_kernel_that_runs(queue, app):
    from perfport.model import APPLICATIONS
    from perfport.model.workremoval import make_removed

    application = APPLICATIONS[app]
    inputs = application.inputs(application.small, np.random.default_rng(0))
    out = _run(queue, make_removed(app, "all"), **inputs)
    assert out.shape == application.reference(**inputs).shape and np.isfinite(out).all()
    stats = _stats(make_removed(app, "all"))
    assert not [o for o in stats.ops if o.dtype == "float32" and o.op != "add"]


def test_the_generators_match_what_each_application_loads():
    from perfport.model import APPLICATIONS
    from perfport.model.generators import all_generators
    from perfport.model.workremoval import loaded_arrays

    generators = {g.name: g for g in all_generators() if "work_removal" in g.tags}
    assert len(generators) == len(APPLICATIONS)
    for name, app in APPLICATIONS.items():
        keep = generators["wr_" + name.replace("-", "_")].arg("keep")
        inputs = loaded_arrays(app)
        assert keep is not None and set(keep.values) == ({"all", *inputs} - (
            set(inputs) if len(inputs) == 1 else set()))  # fmt: skip


def test_an_unknown_variable_is_a_one_line_error():
    from perfport.model import APPLICATIONS
    from perfport.model.workremoval import make_removed, remove_work

    with pytest.raises(ModelError, match="not a global array of matmul; give some of a, b, c"):
        remove_work(APPLICATIONS["matmul-noprefetch"].make(), ["x"])
    with pytest.raises(ModelError, match="keep:z is not one of all, a, b"):
        make_removed("matmul-prefetch", "z")


@pytest.mark.parametrize(("app", "keep", "tag", "barriers"), [
    ("matmul-prefetch", "b", "bPF", 2), ("dg-prefetch-dm-tr", "u", "uDGT", 1),
])  # fmt: skip
def test_keep_barriers_puts_the_kernels_barriers_back_and_keeps_the_load(app, keep, tag, barriers):
    from perfport.model import APPLICATIONS
    from perfport.model.gather import loopy
    from perfport.model.workremoval import make_removed

    original = _stats(APPLICATIONS[app].make())
    plain, kept = make_removed(app, keep), make_removed(app, keep, keep_barriers=True)
    assert kept.default_entrypoint.name.startswith("perfport_mk_wrb_")
    loads = [_pattern(m) for m in _stats(kept).mem if m.direction == "load"]
    assert loads == [_pattern(m) for m in original.mem if tag in m.tags]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        codes = [loopy().generate_code_v2(p).device_code() for p in (plain, kept)]
    # the same barriers per iteration of the loop the fetch ran in as the application has
    assert [c.count("barrier(") for c in codes] == [0, barriers]
    assert "wrb_" + app.replace("-", "_") in _wrb_generators()


def _wrb_generators():
    from perfport.model.generators import all_generators

    return {g.name for g in all_generators() if "work_removal_barriers" in g.tags}


def test_the_barriers_do_not_change_the_sum(queue):
    from perfport.model import APPLICATIONS
    from perfport.model.workremoval import make_removed

    b = np.random.default_rng(3).standard_normal((32, 32)).astype(np.float32)
    plain = _run(queue, make_removed("matmul-prefetch", "b"), b=b)
    kept = _run(queue, make_removed("matmul-prefetch", "b", keep_barriers=True), b=b)
    np.testing.assert_allclose(kept, plain, rtol=1e-5)
    assert _wrb_generators() == {"wrb_" + n.replace("-", "_") for n in APPLICATIONS
                                 if "-prefetch" in n or n.startswith("fd")}  # fmt: skip
