"""Issue 24 on an H100: the H200 tile study's data (experiments/2026-11-26-model-tile/data.csv)
measured again on one H100, row for row. Writes ``data.csv`` here: call A's data (the
pipeline's collection, work-removed and application kernels) plus, from call B's stores, the
``lmem_stride_pattern`` rows in 16 x 16 groups (model-e), the ``lmem_stride_pattern`` rows in
1-D groups of 64-1024 (model-f; its hoisting kernels left out, as on the H200) and every
``tile_halo_pattern`` row (model-tile). One device fingerprint, no problem measured twice.

    python experiments/2026-11-27-model-h100/make_data.py
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from pathlib import Path

from perfport.model.dataset import TimedKernel, from_store, read_data, write_data

HERE = Path(__file__).parent
STRIDED, TILE = "mk-lmem_stride_pattern", "mk-tile_halo_pattern"


def stored(part: str) -> list[TimedKernel]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "model.db"
        with gzip.open(HERE / f"callB/{part}/model.db.gz") as src, db.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        return from_store(db)


def main() -> None:
    base = read_data(HERE / "callA/model/data.csv")
    two_d = [
        r for r in stored("model-e") if r.kernel == STRIDED and int(r.problem.get("lsize_1", 1)) > 1
    ]
    groups = [r for r in stored("model-f") if r.kernel == STRIDED]
    tiles = [r for r in stored("model-tile") if r.kernel == TILE]
    rows = [*base, *two_d, *groups, *tiles]
    fingerprints = {r.device_fingerprint for r in rows}
    if len(fingerprints) != 1:
        raise SystemExit(f"expected one device, found fingerprints {sorted(fingerprints)}")
    keys = [(r.kernel, r.problem.key) for r in rows]
    if len(set(keys)) != len(keys):
        raise SystemExit(f"{len(keys) - len(set(keys))} rows repeat a measured problem")
    write_data(rows, HERE / "data.csv")
    print(f"data.csv: {len(base)} + {len(two_d)} + {len(groups)} + {len(tiles)} rows")


if __name__ == "__main__":
    main()
