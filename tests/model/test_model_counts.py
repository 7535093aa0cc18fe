"""Kernel statistics from loopy: counted by hand for the paper's matmul, symbolic, cached."""

from __future__ import annotations

import json

import pytest
from model_support import LOOPY
from model_support import matmul_stats as _matmul_stats

from perfport._core.errors import ExpressionError
from perfport.model import (
    APPLICATIONS,
    FeatureSet,
    Granularity,
    KernelStats,
    StatsCache,
    SyncKind,
    gather,
)

pytest.importorskip("loopy", reason=LOOPY)


@pytest.fixture
def matmul_stats():
    return _matmul_stats()


def _mem(evaluated, variable, direction):
    (found,) = [
        m
        for m in evaluated.mem
        if m.pattern.variable == variable and m.pattern.direction == direction
    ]
    return found


@pytest.mark.parametrize("n", [32, 64, 256])
def test_prefetching_matmul_counts_match_the_hand_count(matmul_stats, n):
    e = matmul_stats["matmul-prefetch"].evaluate({"n": n})
    ops = {(o.dtype, o.op): v for o, v in e.ops}
    # n^3 multiply-adds, counted once per 32-wide sub-group; no separate add or mul is left.
    assert ops[("float32", "madd")] == n**3 / 32
    assert ("float32", "add") not in ops and ("float32", "mul") not in ops
    a, b, c = _mem(e, "a", "load"), _mem(e, "b", "load"), _mem(e, "c", "store")
    # Each work-item loads one element of a and of b per 16-wide tile of k: n/16 each.
    assert a.count == b.count == n * n * (n // 16)
    assert a.pattern.granularity is Granularity.WORKITEM
    # The strides of the paper's Table 1, and the access-to-footprint ratio n/16.
    assert a.lstrides == {0: 1, 1: n} and a.gstrides.get(0, 0) == 0 and a.gstrides[1] == 16 * n
    assert b.lstrides == {0: 1, 1: n} and b.gstrides == {0: 16}
    assert a.afr == b.afr == n / 16
    assert c.count == n * n and c.afr == 1
    sync = dict(e.sync)
    assert sync[SyncKind.KERNEL_LAUNCH] == 1
    assert sync[SyncKind.BARRIER_LOCAL] == 2 * (n // 16)  # per work-item
    assert e.thread_groups == (n // 16) ** 2 and e.work_group_size == 256


def test_matmul_without_prefetch_keeps_the_tags_and_has_no_barrier(matmul_stats):
    e = matmul_stats["matmul-noprefetch"].evaluate({"n": 64})
    a = _mem(e, "a", "load")
    # a[i, k] is the same for every work-item of a sub-group (lid(0) stride 0): a uniform
    # access, counted once per sub-group, as the paper does; its AFR is n.
    assert a.pattern.tags == ("aLD",) and a.count == 64**3 / 32
    assert a.pattern.granularity is Granularity.SUBGROUP and a.afr == 64
    assert dict(e.sync).get(SyncKind.BARRIER_LOCAL, 0) == 0
    assert FeatureSet().value("f_mem_access_tag:bLD", e) == 64**3


def test_counts_are_symbolic_text_that_survives_json(matmul_stats):
    stats = matmul_stats["matmul-prefetch"]
    assert "n" in stats.ops[0].count and stats.params == ("n",)
    again = KernelStats.from_json(json.loads(stats.dumps()))
    assert again == stats
    assert again.evaluate({"n": 512}).thread_groups == stats.evaluate({"n": 512}).thread_groups


def test_sizes_outside_the_kernels_assumptions_are_refused(matmul_stats):
    with pytest.raises(ExpressionError, match="outside the assumptions"):
        matmul_stats["matmul-prefetch"].evaluate({"n": 40})
    with pytest.raises(ExpressionError, match="--problem n=VALUE"):
        matmul_stats["matmul-prefetch"].evaluate({})


def test_a_size_outside_a_kernels_domain_is_refused_without_assumptions():
    import loopy as lp
    import numpy as np

    knl = lp.make_kernel(
        "{[i]: 0 <= i < n}",
        "y[i] = 2*x[i]",
        [lp.GlobalArg("x,y", np.float32, shape=("n",)), lp.ValueArg("n", np.int32)],
        lang_version=(2018, 2),
    )
    stats = gather(lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0"), 32)
    assert stats.evaluate({"n": 0}).thread_groups == 0  # empty, but inside the domain
    with pytest.raises(ExpressionError, match=r"n=-64 .* -1 work-groups: a size outside"):
        stats.evaluate({"n": -64})


def test_approximations_are_reported(matmul_stats):
    notes = matmul_stats["matmul-prefetch"].approximations
    assert any("sub-group" in note for note in notes)


def test_a_new_size_is_evaluated_without_counting_again(tmp_path):
    calls = []

    def counting(program, subgroup_size):
        calls.append(subgroup_size)
        return gather(program, subgroup_size)

    program = APPLICATIONS["matmul-noprefetch"].make()
    cache = StatsCache(tmp_path, gatherer=counting)
    first = cache.stats(program).evaluate({"n": 64})
    second = cache.stats(APPLICATIONS["matmul-noprefetch"].make()).evaluate({"n": 4096})
    assert calls == [32]
    assert second.thread_groups == (4096 // 16) ** 2 != first.thread_groups
    # A second process reads the folder: still no count.
    StatsCache(tmp_path, gatherer=counting).stats(program)
    assert calls == [32]
    # Another sub-group size is another count.
    cache.stats(program, subgroup_size=64)
    assert calls == [32, 64]


def test_a_damaged_cache_entry_is_counted_again(tmp_path):
    program = APPLICATIONS["matmul-noprefetch"].make()
    StatsCache(tmp_path).stats(program)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    assert StatsCache(tmp_path).stats(program).kernel == "matmul"
    assert json.loads(entry.read_text())["kernel"] == "matmul"


def test_the_afr_is_each_access_pattern_s_over_the_variable_s_footprint():
    # docs/model.md's definition read as the variable's ratio (4 here); it is each pattern's.
    import loopy as lp
    import numpy as np

    knl = lp.make_kernel(
        "{[i,j]: 0 <= i,j < n}",
        "b[i,j] = a[j,i] {id=s1}\nc[i,j] = 2*a[i,j] {id=s2}\nd[j,i] = a[i,j] + a[j,i] {id=s3}",
        [lp.GlobalArg("a,b,c,d", np.float32, shape=("n", "n")), lp.ValueArg("n", np.int32)],
        assumptions="n mod 16 = 0 and n >= 16", lang_version=(2018, 2),
    )  # fmt: skip
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    e = gather(lp.split_iname(knl, "j", 16, outer_tag="g.1", inner_tag="l.1"), 32)
    e = e.evaluate({"n": 64})
    loads = [m for m in e.mem if m.pattern.variable == "a" and m.pattern.direction == "load"]
    assert len(loads) == 2 and {m.count for m in loads} == {2 * 64 * 64}
    assert [m.afr for m in loads] == [2.0, 2.0]
