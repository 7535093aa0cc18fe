"""experiments/2026-11-26-wg-cpu/gpu_host_collect.sh: its smoke path on PoCL, end to end."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfport.store import Store
from perfport.wg import dataset_from_store

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "experiments" / "2026-11-26-wg-cpu" / "gpu_host_collect.sh"


@pytest.mark.slow  # about 20-30 s on two busy cores: PoCL builds every candidate size
def test_the_smoke_run_stores_every_scenario_at_the_candidate_sizes_only(tmp_path):
    env = {
        **os.environ, "OUT": str(tmp_path), "PYTHON": sys.executable, "THREADS": "1",
        "BUDGET": "80", "PREBUILD_S": "30",
        "PICK": "--scenarios 2 --sizes 64 --max-border 1 --rounds 2 --repeats 1 --candidates 4",
    }  # fmt: skip
    run = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=200)  # fmt: skip
    assert run.returncode == 0, run.stderr
    summary = (tmp_path / "summary.txt").read_text()
    assert "T=1 rc=0 compute_units=[1] scenarios=2" in summary
    with gzip.open(tmp_path / "cpu-1.db.gz") as packed, open(tmp_path / "cpu-1.db", "wb") as db:
        shutil.copyfileobj(packed, db)
    with Store(tmp_path / "cpu-1.db", create=False) as store:
        data = dataset_from_store(store)
    assert len(data) == 2 and (32, 4) in set(map(tuple, data.sizes.tolist()))
    assert 4 <= len(data.sizes) <= 5
