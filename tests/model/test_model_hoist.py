"""The issued local-load count (``perfport.model.hoist``): a local load whose index does not
change in an enclosing sequential loop, with its array neither written nor fenced by a
barrier in that loop, counts once per iteration of the loops it depends on."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from model_support import LOOPY
from model_support import matmul_stats as _matmul_stats

from perfport.model import APPLICATIONS, KernelStats, gather
from perfport.model.counts import EvaluatedMem, EvaluatedStats
from perfport.model.errors import ModelError
from perfport.model.features import parse_feature

pytest.importorskip("loopy", reason=LOOPY)

N = 64  # two work-groups of 32, one sub-group each


def _kernel(read: str, inames: str = "g:j:m", extra: str = "") -> Any:
    """A 4 x 32 local array filled once (one barrier), then read by ``read`` inside the
    loops ``inames`` (j over 4, m over 3, j outside m), plus ``extra`` instructions."""
    import loopy as lp

    loc = lp.TemporaryVariable(
        "loc", np.float32, shape=(4, 32), address_space=lp.AddressSpace.LOCAL
    )
    body = f"""
    loc[f, g % 32] = a[g] + f {{id=fill, inames=g:f}}
    ... lbarrier {{id=sync, dep=fill}}
    <float32> acc = 0 {{id=zero, inames=g}}
    acc = acc + {read} {{id=sum, dep=sync:zero, inames={inames}}}
    {extra}
    out[g] = acc {{id=store, dep=sum}}
    """
    knl = lp.make_kernel(
        "{[g,f,j,m]: 0<=g<n and 0<=f<4 and 0<=j<4 and 0<=m<3}",
        body,
        [lp.GlobalArg("a,out", np.float32, shape="n"), loc, lp.ValueArg("n", np.int32)],
        lang_version=(2018, 2),
    )
    knl = lp.prioritize_loops(lp.assume(knl, "n mod 32 = 0 and n >= 32"), "j,m")
    return lp.split_iname(knl, "g", 32, outer_tag="g.0", inner_tag="l.0")


def _local_load(stats: EvaluatedStats, variable: str = "loc") -> EvaluatedMem:
    (found,) = [
        m
        for m in stats.mem
        if m.pattern.mtype == "local"
        and m.pattern.variable == variable
        and m.pattern.direction == "load"
    ]
    return found


def _barriers(stats: EvaluatedStats) -> float:
    return sum(v for k, v in stats.sync if k.value == "barrier_local")


def test_load_invariant_in_the_inner_loop_counts_once_per_outer_iteration() -> None:
    e = gather(_kernel("loc[j, g % 32]")).evaluate({"n": N})
    load = _local_load(e)
    # Per sub-group (one per work-group): loopy 4 x 3 runs, issued once per j.
    assert load.count == 2 * 4 * 3
    assert load.issued == 2 * 4


def test_load_invariant_in_the_outer_loop_counts_once_per_inner_iteration() -> None:
    # The rule goes by dependence, not nesting: loc[m, ..] does not change with j.
    load = _local_load(gather(_kernel("loc[m, g % 32]")).evaluate({"n": N}))
    assert (load.count, load.issued) == (2 * 4 * 3, 2 * 3)


def test_load_depending_on_every_loop_is_unchanged() -> None:
    load = _local_load(gather(_kernel("loc[m, g % 32]", inames="g:m")).evaluate({"n": N}))
    assert load.count == load.issued == 2 * 3


def test_load_whose_index_reads_a_temporary_is_unchanged() -> None:
    # The temporary may change in any loop: no hoisting assumed.
    extra = "<int32> t = 1 {id=t, inames=g}"
    e = gather(_kernel("loc[t, g % 32]", extra=extra)).evaluate({"n": N})
    assert _local_load(e).issued == _local_load(e).count == 2 * 4 * 3


def test_load_whose_array_is_written_in_the_loop_is_unchanged() -> None:
    write = "loc[j, g % 32] = acc {id=upd, dep=sum, nosync=sum, inames=g:j:m}"
    e = gather(_kernel("loc[j, g % 32]", extra=write)).evaluate({"n": N})
    assert _barriers(e) == 1  # the one after the fill: only the write keeps the load in m
    assert _local_load(e).issued == _local_load(e).count == 2 * 4 * 3


def test_load_with_a_barrier_in_the_loop_is_unchanged() -> None:
    fence = "... lbarrier {id=b2, dep=zero, inames=g:j:m}"
    e = gather(_kernel("loc[j, g % 32]", extra=fence)).evaluate({"n": N})
    assert _barriers(e) == 1 + 4 * 3
    assert _local_load(e).issued == _local_load(e).count == 2 * 4 * 3


def test_stores_and_global_accesses_keep_loopys_count() -> None:
    e = gather(_kernel("loc[j, g % 32]")).evaluate({"n": N})
    for m in e.mem:
        if not (m.pattern.mtype == "local" and m.pattern.direction == "load"):
            assert m.issued == m.count, m.pattern


def test_matmul_prefetch_is_unchanged() -> None:
    # Its PTX issues 32 ld.shared.f32 per 16 fma, as loopy counts: a_fetch and b_fetch
    # both depend on the only sequential loop inside the tile.
    e = _matmul_stats()["matmul-prefetch"].evaluate({"n": 256})
    local = [m for m in e.mem if m.pattern.mtype == "local"]
    assert {m.pattern.variable for m in local} == {"a_fetch", "b_fetch"}
    assert all(m.issued == m.count for m in local)


@pytest.mark.parametrize("nelements", [64, 1024])
def test_dg_prefetch_u_issues_16_loads_per_tile_as_its_ptx(nelements: int) -> None:
    e = gather(APPLICATIONS["dg-prefetch-u"].make()).evaluate({"nelements": nelements})
    load = _local_load(e, "u_fetch")
    # 16 x 16 work-groups: 8 sub-groups, 4 tiles of j (64 nodes / 16) per work-group.
    per_tile = e.thread_groups * 8 * 4
    assert load.count / per_tile == 48  # loopy: once per (j_inner, m)
    assert load.issued / per_tile == 16  # the PTX: 16 ld.shared.f32 per tile, 48 fma


def test_hoisted_features_use_the_issued_count_and_the_others_do_not() -> None:
    e = gather(APPLICATIONS["dg-prefetch-u"].make()).evaluate({"nelements": 1024})
    old = parse_feature("f_mem_transactions_local_float32_load").value(e)
    new = parse_feature("f_mem_transactions_local_float32_load_hoisted").value(e)
    assert new == pytest.approx(old / 3)  # only u_fetch's load is local and loaded
    access = parse_feature("f_mem_access_local_float32_load").value(e)
    assert access == _local_load(e, "u_fetch").count
    assert parse_feature("f_mem_access_local_float32_load_hoisted").value(e) == access / 3


def test_issued_count_survives_json_and_old_statistics_refuse_hoisted() -> None:
    stats = gather(_kernel("loc[j, g % 32]"))
    again = KernelStats.from_json(json.loads(stats.dumps()))
    assert again == stats
    assert _local_load(again.evaluate({"n": N})).issued == 2 * 4
    data = json.loads(stats.dumps())
    for m in data["mem"]:
        m.pop("issued")
    old = KernelStats.from_json(data).evaluate({"n": N})
    assert parse_feature("f_mem_access_local").value(old) > 0
    with pytest.raises(ModelError, match="gather them again"):
        parse_feature("f_mem_access_local_hoisted").value(old)


def test_a_failing_hoist_analysis_leaves_loopys_counts_and_a_note(monkeypatch) -> None:
    """The issued count is optional: where its analysis raises, the kernel is still counted
    (issued = loopy's count) and the statistics say why."""
    import importlib

    gather_module = importlib.import_module("perfport.model.gather")

    def broken(*_: Any) -> dict[Any, Any]:
        raise RuntimeError("no linearization")

    monkeypatch.setattr(gather_module, "hoisted_removals", broken)
    stats = gather(_kernel("loc[j, g % 32]"))
    load = _local_load(stats.evaluate({"n": N}))
    assert load.issued == load.count == 2 * 4 * 3
    notes = stats.approximations
    assert any("no load hoisted" in n and "no linearization" in n for n in notes), notes
