"""experiments/2026-11-26-matmul-tiled-b/matmul_b.py: the focus list of lvw=4 configurations
and the summary against cuBLAS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import load_experiment
from perfport._core import Config
from perfport.kernels import builtin

module = load_experiment("matmul_b")


def test_focus_is_legal_at_4096_and_fits_an_nvidia_work_group() -> None:
    spec = builtin("matmul_tiled")
    problem = spec.problem.merged({"M": 4096, "N": 4096, "K": 4096})
    for values in (module.BASELINE, *module.FOCUS):
        config = Config.of(dict(zip(module.NAMES, values, strict=True)))
        env = spec.env(config, dict(problem))
        assert all(r.value(env) for r in spec.restriction_exprs), values
        assert spec.local_mem_bytes(env) <= 48 * 1024, values
        assert env["wg_m"] * env["wg_n"] <= 1024, values
    assert all(v[-1] == 4 for v in module.FOCUS) and module.BASELINE[-1] == 1


def test_summary_takes_each_devices_best_against_cublas(tmp_path: Path) -> None:
    def report(ms: float, lvw: int) -> str:
        return json.dumps({"best": {"time_ms": ms, "config": {"lvw": lvw}}})

    (tmp_path / "cublas.json").write_text(json.dumps({"cublas_sgemm_ms": 2.0}))
    (tmp_path / "tune-baseline-cuda_0.json").write_text(report(4.0, 1))
    (tmp_path / "tune-focus-cuda_0.json").write_text(report(3.2, 4))
    (tmp_path / "tune-baseline-opencl_0_0.json").write_text(report(5.0, 1))
    (tmp_path / "tune-focus-opencl_0_0.json").write_text("")  # a run that timed out
    result = module.summary(tmp_path)["devices"]
    assert result["cuda_0"]["fraction_of_cublas"] == pytest.approx(2.0 / 3.2)
    assert result["cuda_0"]["baseline_fraction_of_cublas"] == pytest.approx(0.5)
    assert result["opencl_0_0"]["best_lvw4"] is None
    assert result["opencl_0_0"]["fraction_of_cublas"] == pytest.approx(0.4)
