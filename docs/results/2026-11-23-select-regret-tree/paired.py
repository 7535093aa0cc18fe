"""Two selectors compared split by split.

    python docs/results/2026-11-23-select-regret-tree/paired.py BASE NEW FILE.md ...

Each FILE is the output of ``experiments/2026-11-22-lawson-gemm-h100-derived-features/select_seeds.py`` with both classifiers BASE and NEW
(e.g. ``decision_tree_a_derived`` and ``decision_tree_regret_derived``). For each table,
pruning and k: both means over the splits, the mean paired difference (NEW minus BASE, points
of % of the optimum), its standard error, and on how many splits each was better.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def rows(path: Path, names: tuple[str, str]) -> dict[tuple[str, str, str], list[float]]:
    """(classifier, pruning, k) -> the per-split figures of one select_seeds output."""
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 7 and cells[0] in names:
            out[(cells[0], cells[1], cells[3])] = [float(c) for c in cells[4:-3]]
    return out


def main() -> None:
    base, new, *files = sys.argv[1:]
    print(f"| table | pruning | k | {base} | {new} | paired difference (SE) | better / worse |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in files:
        table = rows(Path(name), (base, new))
        for (clf, pruning, k), before in table.items():
            if clf != base:
                continue
            after = np.array(table[(new, pruning, k)])
            d = after - np.array(before)
            se = d.std(ddof=1) / np.sqrt(len(d))
            print(
                f"| {Path(name).stem} | {pruning} | {k} | {np.mean(before):.1f} "
                f"| {after.mean():.1f} | {d.mean():+.2f} ({se:.2f}) "
                f"| {(d > 0).sum()} / {(d < 0).sum()} |"
            )


if __name__ == "__main__":
    main()
