"""Mean over seeds of ``perfport wg evaluate --json`` runs, per method and partition (% of the
oracle, geometric mean), as a markdown table.

    python docs/results/2026-11-23-wg-weighted/table.py docs/results/2026-11-23-wg-weighted/perfport-seed*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

PARTITIONS = ("kernel", "synthetic-real", "device", "10-fold", "dataset")


def main() -> None:
    rows = [r for path in sys.argv[1:] for r in json.loads(Path(path).read_text())["results"]]
    print("| method | " + " | ".join(PARTITIONS) + " |")
    print("|---|" + "---:|" * len(PARTITIONS))
    for m in dict.fromkeys(r["method"] for r in rows):
        cells = [
            100
            * np.mean([r["performance"] for r in rows if (r["method"], r["partition"]) == (m, p)])
            for p in PARTITIONS
        ]
        print(f"| {m} | " + " | ".join(f"{v:.1f}" for v in cells) + " |")


if __name__ == "__main__":
    main()
