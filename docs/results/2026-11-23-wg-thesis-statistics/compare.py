"""Cummins' pilot data under both means, against the thesis' tables.

    python docs/results/2026-11-23-wg-thesis-statistics/compare.py evaluate-seed0.json ...

Each argument is the output of ``perfport wg evaluate --data cummins-pilot --seed N --json``.
Prints, per method, the performance on each partition the pilot has (mean over the files) as
the arithmetic mean of the per-scenario fractions of the oracle (``performance_arithmetic``,
what Cummins' ``best_classification_results.sql`` computes) and as the geometric mean
(``performance``), then the thesis' rows (``thesis_tables/class*.csv``) for the same partitions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

PARTITIONS = ("10-fold", "device", "kernel", "dataset")
# The thesis' class.csv (J48, nearest-neighbour fallback), class-speedup.csv, class-runtime.csv.
THESIS = {
    "classifier (J48), nearest-neighbour fallback": (92, 85, 89, 91),
    "speedup regressor": (89, 85, 88, 88),
    "runtime regressor": (68, 69, 74, 72),
}


def main() -> None:
    runs = [json.loads(Path(path).read_text())["results"] for path in sys.argv[1:]]
    cells: dict[tuple[str, str, str], list[float]] = {}
    for rows in runs:
        for r in rows:
            for key in ("performance_arithmetic", "performance"):
                cells.setdefault((r["method"], r["partition"], key), []).append(r[key])
    methods = list(dict.fromkeys(r["method"] for r in runs[0]))
    for key, label in (("performance_arithmetic", "arithmetic"), ("performance", "geometric")):
        print(f"\n{label} mean over test scenarios, % of the oracle, mean of {len(runs)} seed(s)\n")
        print("| method | " + " | ".join(PARTITIONS) + " | mean of the four |")
        print("|---|" + "---:|" * (len(PARTITIONS) + 1))
        for m in methods:
            values = [100 * np.mean(cells[(m, p, key)]) for p in PARTITIONS]
            print(
                f"| {m} | " + " | ".join(f"{v:.1f}" for v in values) + f" | {np.mean(values):.1f} |"
            )
    print("\nthe thesis, same partitions (its figures are whole percent)\n")
    print("| table | " + " | ".join(PARTITIONS) + " | mean of the four |")
    print("|---|" + "---:|" * (len(PARTITIONS) + 1))
    for name, values in THESIS.items():
        print(f"| {name} | " + " | ".join(map(str, values)) + f" | {np.mean(values):.2f} |")


if __name__ == "__main__":
    main()
