"""The regret tree against tree A with derived features, split by split.

    python docs/results/2026-11-23-select-regret-tree/paired.py FILE.md ...

Each FILE is the output of ``benchmarks/select_seeds.py`` with both classifiers
``decision_tree_a_derived`` and ``decision_tree_regret_derived``. For each table, pruning and
k: both means over the splits, the mean paired difference (regret tree minus tree A, points of
% of the optimum), its standard error, and on how many splits each was better.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BASE, NEW = "decision_tree_a_derived", "decision_tree_regret_derived"


def rows(path: Path) -> dict[tuple[str, str, str], list[float]]:
    """(classifier, pruning, k) -> the per-split figures of one select_seeds output."""
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 7 and cells[0] in (BASE, NEW):
            out[(cells[0], cells[1], cells[3])] = [float(c) for c in cells[4:-3]]
    return out


def main() -> None:
    print(
        "| table | pruning | k | tree A derived | regret tree | paired difference (SE) | better / worse |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in sys.argv[1:]:
        table = rows(Path(name))
        for (clf, pruning, k), base in table.items():
            if clf != BASE:
                continue
            new = np.array(table[(NEW, pruning, k)])
            d = new - np.array(base)
            se = d.std(ddof=1) / np.sqrt(len(d))
            print(
                f"| {Path(name).stem} | {pruning} | {k} | {np.mean(base):.1f} | {new.mean():.1f} "
                f"| {d.mean():+.2f} ({se:.2f}) | {(d > 0).sum()} / {(d < 0).sum()} |"
            )


if __name__ == "__main__":
    main()
