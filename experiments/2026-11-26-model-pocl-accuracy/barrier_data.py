"""Write the shipped PoCL data with each work-removal kernel of an application that has
barriers (``wr_<app>``) replaced by its barrier-keeping twin (``wrb_<app>``) from a store.

    perfport model collect --filter wrb_matmul_prefetch keep:a,b n:256,512 --match intersect --db wrb.db
    perfport model collect --filter wrb_dg_prefetch_u wrb_dg_prefetch_dm wrb_dg_prefetch_dm_tr \\
        keep:diff_mat,u nelements:2048,8192 --match intersect --db wrb.db
    perfport model collect --filter wrb_fd_16x16 wrb_fd_18x18 n:560,1120 --match intersect --db wrb.db
    python experiments/2026-11-26-model-pocl-accuracy/barrier_data.py wrb.db OUT.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from perfport.model.dataset import from_store, read_data, write_data

DATA = Path("src/perfport/datasets/model/pocl-paper.csv")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    runs = read_data(DATA)
    twins = [r for r in from_store(args.db) if r.kernel.startswith("mk-wrb_")]
    fingerprints = {r.device_fingerprint for r in runs}
    if not twins or {r.device_fingerprint for r in twins} - fingerprints:
        parser.error(f"{args.db}: give a store with wrb_ kernels of the device of {DATA}")
    replaced = {r.kernel.replace("mk-wrb_", "mk-wr_") for r in twins}
    kept = [r for r in runs if r.kernel not in replaced]
    write_data([*kept, *twins], args.out)
    print(f"{len(runs) - len(kept)} wr_ measurements replaced by {len(twins)} wrb_ ones")


if __name__ == "__main__":
    main()
