"""One selector before and after a change, split by split.

    python docs/results/2026-11-23-select-recombined/versus.py CLASSIFIER BEFORE.md AFTER.md [...]

BEFORE and AFTER come in pairs: outputs of ``experiments/2026-11-22-lawson-gemm-h100-derived-features/select_seeds.py`` on the same table,
seeds and split, before and after the change. For each pruning and k: both means, the mean
paired difference (AFTER minus BEFORE, points of % of the optimum), its standard error, and
on how many splits each was better.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def rows(path: Path, classifier: str) -> dict[tuple[str, str], list[float]]:
    """(pruning, k) -> the per-split figures of ``classifier`` in one select_seeds output."""
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 7 and cells[0] == classifier:
            out[(cells[1], cells[3])] = [float(c) for c in cells[4:-3]]
    return out


def main() -> None:
    classifier, *files = sys.argv[1:]
    print("| table | pruning | k | before | after | paired difference (SE) | better / worse |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for before_path, after_path in zip(files[::2], files[1::2], strict=True):
        before, after = rows(Path(before_path), classifier), rows(Path(after_path), classifier)
        for key, old in before.items():
            new = np.array(after[key])
            d = new - np.array(old)
            se = d.std(ddof=1) / np.sqrt(len(d))
            print(
                f"| {Path(after_path).stem} | {key[0]} | {key[1]} | {np.mean(old):.1f} "
                f"| {new.mean():.1f} | {d.mean():+.2f} ({se:.2f}) "
                f"| {(d > 0).sum()} / {(d < 0).sum()} |"
            )


if __name__ == "__main__":
    main()
