"""Feature names of the paper's section 6: parsing, pattern matching, user features."""

from __future__ import annotations

import pytest
from model_support import LOOPY
from model_support import matmul_stats as _matmul_stats

from perfport.model import FeatureKind, FeatureSet, ModelError, SyncKind, parse_feature

A_PATTERN = "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:0}_afr:>1"
B_PATTERN = "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:16}_afr:>1"


def test_the_papers_feature_names_parse():
    op = parse_feature("f_op_float32_madd")
    assert (op.kind, op.dtype, op.op) == (FeatureKind.OP, "float32", "madd")
    mem = parse_feature(B_PATTERN).pattern
    assert (mem.mtype, mem.dtype, mem.direction) == ("global", "float32", "load")
    assert [a for a, _ in mem.lstrides] == [0, 1] and mem.lstrides[1][1].op == ">"
    assert mem.gstrides[0][1].bound == "16" and mem.afr.op == ">"
    assert parse_feature("f_mem_access_tag:a_LD_global").pattern.tag == "a_LD"
    assert parse_feature("f_sync_barrier_local").sync is SyncKind.BARRIER_LOCAL
    assert parse_feature("f_thread_groups").kind is FeatureKind.THREAD_GROUPS
    wall = parse_feature("f_cl_wall_time_nvidia_h100")
    assert (wall.platform, wall.device) == ("nvidia", "h100")


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("f_flops", "built-in features are"),
        ("f_op_float33_add", "f_op_<dtype>_<op>"),
        ("f_mem_access_global_sideways", "not a memory access field"),
        ("f_mem_access_lstrides:0:1", "{axis:cond;axis:cond}"),
        ("f_mem_access_lstrides:{x:1}", "not axis:condition"),
        ("f_sync_barrier_galactic", "synchronisation features are"),
        # Accepted before, each evaluating to 0 or to one of two readings without a word.
        ("f_mem_access_lstrides:{0:1;0:2}", "stride axis 0 is given twice"),
        ("f_mem_access_tag:", "empty tag; write tag:<tag>"),
        ("f_mem_access_tag:_global", "empty tag"),
        ("f_mem_access_load_global", "'global' comes after the direction field"),
        ("f_mem_access_float32_global_load", "'global' comes after the dtype field"),
        ("f_mem_access_afr:>1_lstrides:{0:1}", "comes after the afr field"),
        ("f_mem_access_global_local", "mtype is given twice"),
        ("f_mem_transactions_local_hoisted_banks:32x4", "comes after the hoisted field"),
    ],
)
def test_unknown_features_get_one_line_errors_naming_the_fix(name, hint):
    with pytest.raises(ModelError, match=hint.replace("{", r"\{").replace("}", r"\}")) as exc:
        parse_feature(name)
    assert "\n" not in str(exc.value)


def test_every_field_in_order_parses():
    name = "f_mem_transactions_tag:a_LD_local_float32_load_lstrides:{0:1}_afr:>1_banks:16x4_hoisted"
    pattern = parse_feature(name).pattern
    assert (pattern.tag, pattern.mtype, pattern.banks, pattern.hoisted) == (
        "a_LD", "local", (16, 4), True)  # fmt: skip


def test_stride_and_afr_conditions_pick_the_patterns_of_table_1():
    pytest.importorskip("loopy", reason=LOOPY)
    e = _matmul_stats()["matmul-prefetch"].evaluate({"n": 64})
    features = FeatureSet()
    loads = 64 * 64 * 4  # one element of a (or b) per work-item per tile of k
    assert features.value(A_PATTERN, e) == loads  # a: gid(0) stride 0
    assert features.value(B_PATTERN, e) == loads  # b: gid(0) stride 16
    assert features.value(B_PATTERN.replace("afr:>1", "afr:>4"), e) == 0  # its AFR is n/16 = 4
    assert features.value(B_PATTERN.replace(">15", "<n"), e) == 0  # lid(1) stride is n
    assert features.value("f_mem_access_global_float32_load_lstrides:{1:n}", e) == 2 * loads
    assert features.value("f_mem_access_global", e) == 2 * loads + 64 * 64
    assert features.value("f_mem_access_local_float32_store", e) > 0
    with pytest.raises(ModelError, match="measured, not counted"):
        features.value("f_cl_wall_time_nvidia_h100", e)


def test_user_features_by_expression_and_by_function():
    pytest.importorskip("loopy", reason=LOOPY)
    e = _matmul_stats()["matmul-prefetch"].evaluate({"n": 32})
    features = FeatureSet()
    features.define("f_flops", "2 * f_op_float32_madd * 32")  # per work-item: x sub-group size
    features.define_function("f_n", lambda stats: stats.sizes["n"])
    assert features.value("f_flops", e) == 2 * 32**3
    assert features.value("f_n", e) == 32
    with pytest.raises(ModelError, match="unknown feature 'f_nope'"):
        features.define("f_twice", "2 * f_nope")
    with pytest.raises(ModelError, match="start it with f_"):
        features.define("flops", "2 * f_op_float32_madd")
    with pytest.raises(ModelError, match="already defined"):
        features.define("f_flops", "f_op_float32_madd")
    with pytest.raises(ModelError, match="f_thread_groups is built in"):
        features.define("f_thread_groups", "2")  # would silently replace the count


def test_a_model_file_defines_features_of_its_own_and_keeps_them_when_saved(tmp_path):
    from perfport.model import Model

    data = {
        "format": "perfport-model/1",
        "output": "f_x",
        "expression": "p_a * f_flops + p_b * f_thread_groups",
        "features": {"f_flops": "2 * 32 * f_op_float32_madd"},
    }
    model = Model.from_json(data)
    model.check_features()  # f_flops is the model's own, not unknown
    model.save(tmp_path / "m.json")
    again = Model.load(tmp_path / "m.json")
    assert again.definitions == {"f_flops": "2 * 32 * f_op_float32_madd"}
    assert "features" not in Model("f_x", "p_a * f_thread_groups").to_json()


@pytest.mark.parametrize(
    ("definitions", "hint"),
    [
        ({"f_flops": "2 * f_bogus"}, "unknown feature 'f_bogus'"),
        ({"flops": "2 * f_thread_groups"}, "start it with f_"),
        ({"f_flops": 3}, "must be an expression string"),
        ({"f_flops": "f_more", "f_more": "2 * f_flops"}, "in terms of each other"),
        ({"f_flops": "2 * f_flops"}, "in terms of itself"),
    ],
)
def test_a_model_files_bad_feature_definitions_are_one_line_errors(definitions, hint):
    from perfport.model import Model

    data = {"format": "perfport-model/1", "output": "f_x", "expression": "p_a * f_flops"}
    with pytest.raises(ModelError, match=hint) as exc:
        Model.from_json({**data, "features": definitions})
    assert "\n" not in str(exc.value)


def test_a_definition_may_use_one_defined_after_it():
    from perfport.model import Model

    data = {"format": "perfport-model/1", "output": "f_x", "expression": "p_a * f_flops",
            "features": {"f_flops": "2 * f_fma", "f_fma": "32 * f_op_float32_madd"}}  # fmt: skip
    Model.from_json(data).check_features()


def test_an_unknown_feature_names_the_model_files_features_as_the_fix():
    with pytest.raises(ModelError, match='model file\'s "features"'):
        parse_feature("f_flops")


def test_a_feature_that_uses_a_parameter_is_refused_when_defined():
    # It was accepted, then failed at prediction time with "no value for p_a in 'p_a * 2'".
    with pytest.raises(ModelError, match="features may not use parameters") as exc:
        FeatureSet().define("f_x", "p_a * 2")
    assert "use p_a in the model expression" in str(exc.value)


@pytest.mark.parametrize("condition", [">n/64", ">n-1", ">2*n", "n//2", ">=n%3"])
def test_an_afr_condition_with_arithmetic_outside_braces_is_refused_in_a_formula(condition):
    # 'afr:>n/64' was cut at the '/': the feature divided by 64, not afr > n/64 as
    # 'model stats --feature' reads it.
    from perfport.model import Model

    feature = f"f_mem_access_global_float32_load_afr:{condition}"
    for model in (
        lambda: Model("f_t", f"p_a*{feature}"),
        lambda: Model("f_t", "p_a * f_x", definitions={"f_x": f"2*{feature}"}),
    ):
        with pytest.raises(ModelError, match=r"in braces, afr:\{>n/64\}") as exc:
            model()
        assert "\n" not in str(exc.value)


def test_an_afr_condition_in_braces_takes_arithmetic():
    from perfport.model import Model

    braced = "f_mem_access_global_float32_load_afr:{>n/64}"
    assert Model("f_t", f"p_a*{braced}/64").features == (braced,)
    assert parse_feature(braced).pattern.afr.bound == "n/64"
    assert parse_feature("f_mem_access_afr:{>=n_x}").pattern.afr.bound == "n_x"
    # The formula's own operators stay the formula's: after a space, or after braces.
    unbraced = "f_mem_access_global_float32_load_afr:>1"
    assert Model("f_t", f"p_a * {unbraced} / 64 + p_b*f_thread_groups").features == (
        unbraced, "f_thread_groups")  # fmt: skip
    pytest.importorskip("loopy", reason=LOOPY)
    e = _matmul_stats()["matmul-prefetch"].evaluate({"n": 64})  # b's AFR is n/16 = 4
    features = FeatureSet()
    assert features.value(B_PATTERN.replace("afr:>1", "afr:{>n/32}"), e) == 64 * 64 * 4
    assert features.value(B_PATTERN.replace("afr:>1", "afr:{>n/16}"), e) == 0
