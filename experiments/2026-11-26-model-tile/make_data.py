"""Issue 24: the resident-groups study's data plus the tile-load kernels of one GPU run.
Writes ``data.csv`` here: ``../2026-11-26-model-resident/data.csv`` (198 rows, GPU sessions
d and e on one H200) plus every ``mk-tile_halo_pattern`` row of ``OUT/model.db.gz``, the store
``gpu_run.sh`` leaves. Both must come from one device (fingerprint), and no tile row may
repeat a stored problem.

    python experiments/2026-11-26-model-tile/make_data.py OUT [--base CSV] [--out CSV]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import tempfile
from pathlib import Path

from perfport.model.dataset import from_store, read_data, write_data

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
BASE = ROOT / "experiments/2026-11-26-model-resident/data.csv"
KERNEL = "mk-tile_halo_pattern"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="gpu_run.sh's OUT (holds model.db.gz)")
    parser.add_argument("--base", type=Path, default=BASE, help="the rows to add them to")
    parser.add_argument("--out", type=Path, default=HERE / "data.csv")
    args = parser.parse_args()
    base = read_data(args.base)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "model.db"
        with gzip.open(args.out_dir / "model.db.gz") as src, db.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        tiles = [r for r in from_store(db) if r.kernel == KERNEL]
    if not tiles:
        raise SystemExit(f"no {KERNEL} rows in {args.out_dir / 'model.db.gz'}")
    fingerprints = {r.device_fingerprint for r in [*base, *tiles]}
    if len(fingerprints) != 1:
        raise SystemExit(f"expected one device, found fingerprints {sorted(fingerprints)}")
    keys = {(r.kernel, r.problem.key) for r in base}
    clash = [r for r in tiles if (r.kernel, r.problem.key) in keys]
    if clash:
        raise SystemExit(f"{len(clash)} tile rows repeat a stored problem")
    write_data([*base, *tiles], args.out)
    print(f"{args.out.name}: {len(base)} + {len(tiles)} rows")


if __name__ == "__main__":
    main()
