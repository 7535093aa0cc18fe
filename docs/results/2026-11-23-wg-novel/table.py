"""Means of ``perfport wg evaluate --json --by-device`` runs (one file a seed), per method and
partition, and per device set-up for leave-one-kernel-out and synthetic-to-real.

    python docs/results/2026-11-23-wg-novel/table.py docs/results/2026-11-23-wg-novel/evaluate-seed*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

PARTITIONS = ("kernel", "synthetic-real", "device", "10-fold", "dataset")


def main() -> None:
    runs = [json.loads(Path(p).read_text())["results"] for p in sys.argv[1:]]
    methods = list(dict.fromkeys(r["method"] for r in runs[0]))
    cell = {(r["method"], r["partition"]): [] for r in runs[0]}
    for rows in runs:
        for r in rows:
            cell[(r["method"], r["partition"])].append(r)
    print(f"performance, %: seeds {' / '.join(str(i) for i in range(len(runs)))}: mean\n")
    print("| method | " + " | ".join(PARTITIONS) + " |")
    print("|---|" + "---|" * len(PARTITIONS))
    for m in methods:
        parts = []
        for p in PARTITIONS:
            v = [100 * r["performance"] for r in cell[(m, p)]]
            parts.append(" / ".join(f"{x:.2f}" for x in v) + f": **{np.mean(v):.2f}**")
        print(f"| {m} | " + " | ".join(parts) + " |")
    for p in ("kernel", "synthetic-real"):
        print(f"\n{p}, per device set-up, mean of the seeds\n")
        devices = list(cell[(methods[0], p)][0]["per_device"])
        print("| device | n | " + " | ".join(methods) + " |")
        print("|---|---:|" + "---:|" * len(methods))
        for d in devices:
            n = cell[(methods[0], p)][0]["per_device"][d]["scenarios"]
            v = [
                np.mean([100 * r["per_device"][d]["performance"] for r in cell[(m, p)]])
                for m in methods
            ]
            print(f"| {d} | {n} | " + " | ".join(f"{x:.2f}" for x in v) + " |")


if __name__ == "__main__":
    main()
