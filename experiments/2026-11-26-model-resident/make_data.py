"""Issue 24: the calibration and application data of the resident-groups study, with no GPU.
Writes ``data.csv`` here: the conflicts study's data (GPU session d, calls B and F; 183 rows)
plus GPU session e call 1's 15 ``lmem_stride_pattern`` rows in 1-D groups of 64 to 1024 (same
device fingerprint). The session's 18 ``lmem_hoist_pattern`` rows are left out, so the data
differs from the conflicts study's only by the group-size kernels.

    python experiments/2026-11-26-model-resident/make_data.py
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from pathlib import Path

from perfport.model.dataset import from_store, read_data, write_data

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
BASE = ROOT / "experiments/2026-11-26-model-conflicts/data.csv"
STORE = ROOT / "experiments/2026-11-26-gpu-session-e/call1/model-f/model.db.gz"


def main() -> None:
    base = read_data(BASE)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "model.db"
        with gzip.open(STORE) as src, db.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        groups = [r for r in from_store(db) if r.kernel == "mk-lmem_stride_pattern"]
    fingerprints = {r.device_fingerprint for r in [*base, *groups]}
    if len(fingerprints) != 1:
        raise SystemExit(f"expected one device, found fingerprints {sorted(fingerprints)}")
    keys = {(r.kernel, r.problem.key) for r in base}
    clash = [r for r in groups if (r.kernel, r.problem.key) in keys]
    if clash:
        raise SystemExit(f"{len(clash)} group-size rows repeat a stored problem")
    write_data([*base, *groups], HERE / "data.csv")
    print(f"data.csv: {len(base)} + {len(groups)} rows")


if __name__ == "__main__":
    main()
