"""Write the shipped PoCL data without the global-memory microbenchmarks whose footprint is
at least the device's last-level cache (32 MiB on the development machine's EPYC), so a
calibration sees only the in-cache regime the application kernels run in.

    python experiments/2026-11-26-model-pocl-accuracy/incache_data.py OUT.csv [--cache-mib 32]
    perfport model evaluate --data OUT.csv --model src/perfport/datasets/model/matmul-linear.json
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

DATA = Path("src/perfport/datasets/model/pocl-paper.csv")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cache-mib", type=int, default=32)
    args = parser.parse_args()
    with DATA.open(newline="") as f:
        rows = list(csv.DictReader(f))
    kept = []
    for row in rows:
        if row["kernel"] == "mk-gmem_pattern":
            p = json.loads(row["problem"])
            if p["nel"] * p["n_arrays"] * 4 >= args.cache_mib * 2**20:  # float32 arrays
                continue
        kept.append(row)
    with args.out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)
    print(f"kept {len(kept)} of {len(rows)} measurements")


if __name__ == "__main__":
    main()
