"""A parameter no measurement informs is refused, never kept at its starting value: the H200
run had no barrier kernel (they failed to build), so ``p_barrier`` stayed at 1 s per barrier
and matmul-prefetch was predicted 1000x too slow."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_support import LOOPY

from perfport.model import Measurement, Model, ModelError, calibrate, predict
from perfport.model.inform import collection_filter

pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

EXPRESSION = (
    "p_launch * f_sync_kernel_launch + p_madd * f_op_float32_madd "
    "+ p_barrier * f_sync_barrier_local"
)
TRUTH = {"p_launch": 2e-5, "p_madd": 3e-9, "p_barrier": 0.0}


def _data(barriers: float = 0.0) -> list[Measurement]:
    rows = []
    for i, madds in enumerate((1e5, 3e5, 1e6, 3e6, 1e7)):
        f = {"f_sync_kernel_launch": 1.0, "f_op_float32_madd": madds,
             "f_sync_barrier_local": barriers * i}  # fmt: skip
        t = sum(TRUTH[p] * f[n] for p, n in
                (("p_launch", "f_sync_kernel_launch"), ("p_madd", "f_op_float32_madd")))  # fmt: skip
        rows.append(Measurement(f"k{i}", {}, f, t + 1e-6 * barriers * i))
    return rows


def test_a_parameter_whose_feature_is_always_zero_is_refused_naming_the_collection():
    with pytest.raises(ModelError) as exc:
        calibrate(Model("f_cl_wall_time", EXPRESSION), _data())
    message = str(exc.value)
    assert "\n" not in message and "p_barrier" in message and "f_sync_barrier_local" in message
    assert "perfport model collect --filter barrier_pattern" in message


def test_with_barrier_measurements_it_is_fitted():
    c = calibrate(Model("f_cl_wall_time", EXPRESSION), _data(barriers=100.0))
    assert not c.uninformed and c.parameters["p_barrier"] == pytest.approx(1e-6, rel=1e-3)


def test_pinned_parameters_refuse_only_the_predictions_they_change():
    c = calibrate(Model("f_cl_wall_time", EXPRESSION), _data(), allow_uninformed=True)
    assert set(c.uninformed) == {"p_barrier"} and c.parameters["p_barrier"] == 0.0
    assert c.parameters["p_madd"] == pytest.approx(3e-9, rel=1e-6)
    plain = {"f_sync_kernel_launch": 1.0, "f_op_float32_madd": 1e8, "f_sync_barrier_local": 0}
    assert predict(c, plain).value == pytest.approx(2e-5 + 0.3, rel=1e-6)
    with pytest.raises(ModelError, match="cannot predict: p_barrier is informed by no"):
        predict(c, {**plain, "f_sync_barrier_local": 64.0})
    again = type(c).from_json(json.loads(json.dumps(c.to_json())))
    assert again.uninformed == c.uninformed


def test_a_nonlinear_parameter_whose_column_vanishes_is_refused():
    m = Model("f_cl_wall_time", "p_a * f_op_float32_madd + p_b * p_c * f_sync_barrier_local")
    with pytest.raises(ModelError, match="p_b is informed by no measurement"):
        calibrate(m, _data())


@pytest.mark.parametrize(
    ("feature", "tags"),
    [
        ("f_sync_barrier_local", "barrier_pattern"),
        ("f_op_float64_div", "flops_div_pattern dtype:float64"),
        ("f_mem_access_global_float32_load", "gmem_pattern dtype:float32"),
        ("f_mem_access_local_float32", "lmem_pattern dtype:float32"),
        ("f_mem_access_global_float32_store", "gstore_pattern dtype:float32"),
        ("f_mem_access_global_float64_store", "gstore_pattern dtype:float64"),
        (
            "f_mem_access_global_float32_store_lstrides:{0:2}",
            "gstore_pattern dtype:float32 lid_stride_0:2",
        ),
        ("f_mem_access_global_float32_store_lstrides:{0:8}", "gstore_pattern dtype:float32"),
        (
            "f_mem_access_local_float32_load_lstrides:{0:16}",
            "lmem_stride_pattern dtype:float32 lid_stride_0:16",
        ),
        ("f_thread_groups", "empty_kernel"),
        ("f_mem_access_tag:aPF", "work_removal"),
        ("f_cl_wall_time_x", None),
    ],
)
def test_each_feature_names_the_collection_that_varies_it(feature, tags):
    assert collection_filter(feature) == tags


def test_the_shipped_h200_data_predicts_noprefetch_and_says_why_not_prefetch(capsys):
    pytest.importorskip("loopy", reason=LOOPY)
    from perfport.cli import main
    from perfport.cli.model_fit import shipped

    data = str(shipped("h200-matmul.csv"))
    assert main(["model", "evaluate", "--data", data, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(r["variant"], r["device"], r["n_sizes"]) for r in report["results"]] == [
        ("matmul-noprefetch", "NVIDIA H200", 5)
    ]
    (refused,) = report["unpredictable"]
    assert refused["variant"] == "matmul-prefetch" and refused["n_sizes"] == 5
    assert "p_barrier" in refused["reason"] and "--filter barrier_pattern" in refused["reason"]
    (cal,) = report["calibrations"]
    assert cal["uninformed"].keys() == {"p_barrier"} and cal["parameters"]["p_barrier"] == 0.0
    assert all(np.isfinite(p["predicted_ms"]) for p in report["results"][0]["points"])
    assert main(["model", "evaluate", "--data", data]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "WARNING NVIDIA H200: nonnegative: false (p_gstore" in text
    assert "matmul-prefetch on NVIDIA H200: not predicted (5 sizes)" in text
