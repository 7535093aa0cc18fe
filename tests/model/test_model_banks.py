"""Bank-conflict degrees of local accesses (``perfport.model.banks``) and the feature that
weights sub-group accesses by them (``f_mem_transactions_local_...``)."""

from __future__ import annotations

import pytest

from perfport.model import ModelError, parse_feature
from perfport.model.banks import conflict_degree
from perfport.model.counts import (
    EvaluatedMem,
    EvaluatedStats,
    Granularity,
    KernelStats,
    MemCount,
    work_group_axes,
)


@pytest.mark.parametrize(
    ("strides", "sizes", "degree"),
    [
        ({0: 1}, (256,), 1),
        ({0: 0}, (256,), 1),  # every lane reads one word: a broadcast
        ({0: 2}, (256,), 2),
        ({0: 16}, (256,), 16),
        ({0: 32}, (256,), 32),
        ({0: 2}, (16, 16), 1),  # 16 lanes of a row span 32 words, the second row re-reads them
        ({0: 16}, (16, 16), 8),
        ({0: 32}, (16, 16), 16),
        ({1: 16}, (16, 16), 1),  # lid(1) stride 16: two rows, banks 0 and 16
        ({0: 1, 1: 16}, (16, 16), 1),  # a 16 x 16 tile stored row by row
        ({0: 1, 1: 32}, (16, 16), 2),  # rows 32 words apart land in the same banks
    ],
)
def test_conflict_degree_known_cases(strides: dict[int, int], sizes: tuple[int, ...],
                                     degree: int) -> None:  # fmt: skip
    assert conflict_degree(strides, sizes, 32, 4) == degree


def test_conflict_degree_element_width_and_banks() -> None:
    assert conflict_degree({0: 1}, (256,), 32, 8) == 2  # 64-bit words fill two passes
    assert conflict_degree({0: 1}, (256,), 32, 2) == 1  # two halves share a word
    assert conflict_degree({0: 16}, (256,), 32, 4, banks=16) == 32
    assert conflict_degree({0: 1}, (256,), 64, 4) == 2  # a 64-lane sub-group, 32 banks


def test_conflict_degree_averages_partial_subgroups() -> None:
    # 48 work-items: one full sub-group at stride 16 (16-fold), one of 16 lanes (8-fold).
    assert conflict_degree({0: 16}, (48,), 32, 4) == 12


def test_conflict_degree_refuses_empty_shapes() -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        conflict_degree({0: 1}, (0,), 32, 4)


def test_work_group_axes() -> None:
    assert work_group_axes("(16) * (16)") == ["(16)", "(16)"]
    assert work_group_axes("(256)") == ["(256)"]
    assert work_group_axes("1") == ["1"]
    assert work_group_axes("(n // 16) * (2 * (m))") == ["(n // 16)", "(2 * (m))"]


def _stats(lstrides: dict[int, int], sizes: tuple[int, ...], count: float,
           granularity: Granularity = Granularity.SUBGROUP) -> EvaluatedStats:  # fmt: skip
    group = " * ".join(f"({s})" for s in sizes)
    mem = MemCount("local", "float32", "load", "loc", (), tuple(lstrides.items()), (),
                   granularity, str(count), "")  # fmt: skip
    stats = KernelStats("k", (), 32, (), (mem,), (), "1", group, "True")
    evaluated = stats.evaluate({})
    assert evaluated.local_sizes == sizes
    assert evaluated.mem == (EvaluatedMem(mem, count, lstrides, {}, None),)
    return evaluated


@pytest.mark.parametrize(
    ("strides", "sizes", "degree"),
    [({0: 16}, (256,), 16), ({0: 16}, (16, 16), 8), ({0: 0}, (16, 16), 1)],
)
def test_transactions_feature_weights_counts(strides: dict[int, int], sizes: tuple[int, ...],
                                             degree: int) -> None:  # fmt: skip
    stats = _stats(strides, sizes, 100.0)
    assert parse_feature("f_mem_access_local_float32").value(stats) == 100
    assert parse_feature("f_mem_transactions_local_float32_load").value(stats) == 100 * degree
    assert parse_feature("f_mem_transactions_local_float32_store").value(stats) == 0
    # 16 banks of 4 bytes: 32 lanes at stride 16 all hit bank 0.
    wide = parse_feature("f_mem_transactions_local_float32_banks:16x4").value(stats)
    assert wide == 100 * conflict_degree(strides, sizes, 32, 4, banks=16)


@pytest.mark.parametrize(
    ("granularity", "per_count"),
    [(Granularity.SUBGROUP, 1), (Granularity.WORKITEM, 1 / 32), (Granularity.WORKGROUP, 8)],
)
def test_transactions_count_subgroup_accesses_whatever_loopy_counted_per(
    granularity: Granularity, per_count: float
) -> None:
    # 16 x 16 = 256 work-items: 8 sub-groups of 32; stride 1, no conflict.
    stats = _stats({0: 1}, (16, 16), 64.0, granularity)
    value = parse_feature("f_mem_transactions_local_float32").value(stats)
    assert value == pytest.approx(64 * per_count)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("f_mem_transactions_global_float32", "local memory only"),
        ("f_mem_transactions_local_banks:32", "banks:<count>x<bytes>"),
        ("f_mem_access_local_banks:32x4", "not a memory access field"),
    ],
)
def test_transactions_feature_errors(name: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        parse_feature(name)
