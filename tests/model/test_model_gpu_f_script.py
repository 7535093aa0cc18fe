"""experiments/2026-11-26-model-gpu-f/gpu_run.sh on PoCL with tiny sizes: both collections
complete and the analysis reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_support import LOOPY

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "experiments" / "2026-11-26-model-gpu-f" / "gpu_run.sh"

pytest.importorskip("loopy", reason=LOOPY)
pytest.importorskip("pyopencl")


@pytest.mark.slow
def test_the_gpu_f_script_runs_on_pocl(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "OUT": str(tmp_path / "out"),
        "DB": str(tmp_path / "model.db"),
        "DEVICE": os.environ.get("PERFPORT_TEST_DEVICE", "opencl:0:0"),
        "NEL": "nel:2048",
        "M": "m:2,4",
        "LSIZES": "lsize_0:64,256",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    done = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    hoist = json.loads((out / "collect-hoist.json").read_text())["counts"]
    assert hoist == {"measured": 6, "stored": 0, "failed": 0}  # 3 variants x 2 m
    groups = json.loads((out / "collect-groups.json").read_text())["counts"]
    assert groups == {"measured": 2, "stored": 0, "failed": 0}
    text = (out / "analyse.txt").read_text()
    assert "fraction (invariant - manual) / (dependent - manual)" in text
    assert "| 64 | 32 |" in text and "| 256 | 8 | 1.00 |" in text
    assert (out / "model.db.gz").stat().st_size > 0
