"""experiments/2026-11-26-model-gpu/gpu_run.sh, run on PoCL with tiny sizes: every step
leaves its output, and the evaluations cover all eight application variants."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_support import LOOPY

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "experiments" / "2026-11-26-model-gpu" / "gpu_run.sh"

pytest.importorskip("loopy", reason=LOOPY)
pytest.importorskip("pyopencl")


@pytest.mark.slow
def test_the_gpu_script_runs_end_to_end_on_pocl(tmp_path):
    env = {
        **os.environ,
        "OUT": str(tmp_path / "out"),
        "DB": str(tmp_path / "model.db"),
        "DEVICE": os.environ.get("PERFPORT_TEST_DEVICE", "opencl:0:0"),
        "SIZES": "32,64",
        "DG_SIZES": "16,32",
        "FD_SIZES": "112,224",
        "COLLECT": "empty_kernel barrier_pattern flops_madd_pattern lmem_pattern gmem_pattern "
        "gstore_pattern "
        "dtype:float32 lid_stride_0:1 n_arrays:1,2 m:8,16 ngroups:16,32 nel:4096",
        "LMEM_STRIDE": "lid_stride_0:0,16 m:8 nel:4096",
        "GUIDED_ARGS": "--smoke",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    done = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    collected = json.loads((out / "collect.json").read_text())
    assert collected["counts"]["failed"] == 0 and collected["counts"]["measured"] == 20
    assert json.loads((out / "collect-gmem.json").read_text())["counts"]["measured"] == 2
    gstore = json.loads((out / "collect-gstore.json").read_text())["counts"]
    assert gstore["failed"] == 0 and gstore["measured"] == 2  # n_arrays 1, 2
    calibration = json.loads((out / "calibrate.json").read_text())
    assert calibration["n_measurements"] == 24
    evaluation = json.loads((out / "evaluate.json").read_text())
    from perfport.model import APPLICATIONS

    assert {(r["variant"], r["n_sizes"]) for r in evaluation["results"]} == {
        (name, 2) for name in APPLICATIONS
    }
    for family, measured in (("matmul", 8), ("dg", 16), ("fd", 4)):
        wr = json.loads((out / f"collect-wr-{family}.json").read_text())["counts"]
        assert wr["failed"] == 0 and wr["measured"] == measured
    paper = json.loads((out / "evaluate-paper.json").read_text())
    assert len(paper["results"]) == len(APPLICATIONS)
    assert json.loads((out / "predict.json").read_text())["predicted_ms"] > 0
    assert (out / "model.db.gz").stat().st_size > 0 and (out / "data.csv").is_file()
    for model in ("matmul-linear", "paper-linear", "matmul-overlap", "paper-overlap"):
        drawn = sorted(p.name.split("-")[0] for p in (out / f"figures-{model}").glob("*.svg"))
        assert drawn == ["breakdown", "dg", "fd", "matmul"], model  # Figures 7-9, breakdown
    stride = json.loads((out / "collect-lmem-stride.json").read_text())["counts"]
    assert stride["failed"] == 0 and stride["measured"] == 2
    for name in ("evaluate-overlap", "evaluate-paper-overlap", "evaluate-paper-groups",
                 "evaluate-paper-lstride", "evaluate-paper-lstride-nonnegative"):  # fmt: skip
        assert len(json.loads((out / f"{name}.json").read_text())["results"]) == len(APPLICATIONS)
    guided = json.loads((out / "guided.json").read_text())
    assert [s["space"] for s in guided["spaces"]] == ["matmul", "dg", "fd"]
    assert all(1 <= s["measured"] <= 3 for s in guided["spaces"])  # a loaded machine drops some
    assert (out / "guided.db.gz").stat().st_size > 0
