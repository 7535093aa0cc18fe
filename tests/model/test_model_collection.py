"""The measurement-kernel collection: the four match conditions of section 7.1, variant tags
narrowing the Cartesian product, and the built-in generators' counts."""

from __future__ import annotations

import warnings

import pytest
from model_support import LOOPY

from perfport.model.collection import (
    FilterTags,
    Generator,
    KernelCollection,
    MatchCondition,
    VariantArg,
)
from perfport.model.errors import ModelError


def _gen(name: str, *tags: str) -> Generator:
    args = (VariantArg("dtype", ("float32", "float64")), VariantArg("n", (1, 2, 3), open=True))
    return Generator(name, frozenset(tags), args, lambda **kw: kw, frozenset({"n"}))


COLLECTION = (
    _gen("matmul", "matmul_sq"),
    _gen("fd", "finite_diff"),
    _gen("both", "matmul_sq", "finite_diff"),
)


def _names(match: MatchCondition, tags: list[str]) -> set[str]:
    return {g.name for g in KernelCollection(COLLECTION, match).matching(tags)}


def test_identical_needs_the_same_tag_set() -> None:
    assert _names(MatchCondition.IDENTICAL, ["matmul_sq"]) == {"matmul"}
    assert _names(MatchCondition.IDENTICAL, ["matmul_sq", "finite_diff"]) == {"both"}


def test_subset_takes_generators_whose_tags_the_user_gave() -> None:
    assert _names(MatchCondition.SUBSET, ["matmul_sq"]) == {"matmul"}
    assert _names(MatchCondition.SUBSET, ["matmul_sq", "finite_diff"]) == {"matmul", "fd", "both"}


def test_superset_is_the_default_and_needs_every_user_tag() -> None:
    assert KernelCollection(COLLECTION).match is MatchCondition.SUPERSET
    assert _names(MatchCondition.SUPERSET, ["matmul_sq"]) == {"matmul", "both"}
    assert _names(MatchCondition.SUPERSET, ["matmul_sq", "finite_diff"]) == {"both"}


def test_intersect_needs_one_shared_tag() -> None:
    assert _names(MatchCondition.INTERSECT, ["matmul_sq", "finite_diff"]) == {
        "matmul",
        "fd",
        "both",
    }
    assert _names(MatchCondition.INTERSECT, ["stencil"]) == set()


def test_variant_tags_narrow_the_cartesian_product() -> None:
    collection = KernelCollection(COLLECTION)
    assert len(collection.variants(["matmul_sq"])) == 2 * (2 * 3)
    chosen = collection.variants(["matmul_sq", "dtype:float32", "n:2,7"])
    assert sorted((g.name, a["dtype"], a["n"]) for g, a in chosen) == [
        ("both", "float32", 2), ("both", "float32", 7),
        ("matmul", "float32", 2), ("matmul", "float32", 7),
    ]  # fmt: skip
    kernel = KernelCollection(COLLECTION).generate_kernels(["finite_diff"])[0]
    assert kernel.sizes == {"n": 1} and kernel.program == {"dtype": "float32"}


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (["matmul_sq", "dtype:float16"], "dtype:float16 is not allowed"),
        (["matmul_sq", "n:0"], "not a valid int >= 1"),
        (["matmul_sq", "width:3"], "no matching generator has that argument"),
        (["dtype:"], "give a generator tag"),
    ],
)
def test_bad_tags_are_one_line_errors(tags: list[str], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        KernelCollection(COLLECTION).variants(tags)


def test_filter_tags_split_generator_and_variant_tags() -> None:
    parsed = FilterTags.parse(["flops", "dtype:float32", "m:64,128", "m:256"])
    assert parsed.generator_tags == {"flops"}
    assert parsed.variant_tags == {"dtype": ("float32",), "m": ("64", "128", "256")}


def test_builtin_generators_count_what_they_exercise() -> None:
    pytest.importorskip("loopy", reason=LOOPY)
    from perfport.model import FeatureSet, gather
    from perfport.model.generators import all_generators

    collection = KernelCollection(all_generators())
    features = FeatureSet()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (empty,) = collection.generate_kernels(["empty_kernel", "ngroups:64"])
        (barrier,) = collection.generate_kernels(["barrier_pattern", "m:8", "nel:1024"])
        stats = {k.generator: gather(k.program).evaluate(k.sizes) for k in (empty, barrier)}
    assert features.value("f_thread_groups", stats["empty_kernel"]) == 64
    assert features.value("f_sync_kernel_launch", stats["empty_kernel"]) == 1
    assert not stats["empty_kernel"].ops and not stats["empty_kernel"].mem
    assert features.value("f_sync_barrier_local", stats["barrier_pattern"]) == 8
    assert features.value("f_mem_access_global_float32_load", stats["barrier_pattern"]) == 1024


@pytest.mark.slow
def test_flops_generator_counts_32_variables_per_iteration() -> None:
    pytest.importorskip("loopy", reason=LOOPY)
    from perfport.model import FeatureSet, gather
    from perfport.model.generators import all_generators

    collection = KernelCollection(all_generators())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k,) = collection.generate_kernels(
            ["flops_madd_pattern", "dtype:float32", "nel:1024", "m:16"]
        )
        stats = gather(k.program).evaluate(k.sizes)
    # 32 madds per iteration per work-item, counted once per sub-group of 32
    assert FeatureSet().value("f_op_float32_madd", stats) == 32 * 16 * 1024 / 32
