"""Worst and best median microseconds per round, before and after (run.sh's outputs)."""

import json
import sys
from pathlib import Path

here = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
print("| round | counts: worst / best median, before | after | with features: before | after |")
print("|---|---:|---:|---:|---:|")
for r in (1, 2, 3):
    cells = []
    for key in ("evaluate", "evaluate_and_features"):
        for side in ("before", "after"):
            rows = json.loads((here / f"{side}-{r}.json").read_text())
            medians = [row[key]["median_us"] for row in rows]
            cells.append(f"{max(medians):.0f} / {min(medians):.0f}")
    print(f"| {r} | " + " | ".join(cells) + " |")
