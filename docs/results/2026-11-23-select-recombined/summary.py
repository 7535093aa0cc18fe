"""Forty splits in one table: seeds 0-19 and 20-39 of each select_seeds output beside this page.

    python docs/results/2026-11-23-select-recombined/summary.py

Per table, split, pruning and k: the mean over the forty splits of tree A with derived
features and of the distilled tree, its standard error, and how many splits fell under 92%.
Then, for greedy sets at k = 8, the distilled tree on splits 0-19, on the check splits 20-59
and on all sixty (the ``*-40-59.md`` files hold splits 40-59).
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def rows(path: Path) -> dict[tuple[str, str, str], list[float]]:
    """(classifier, pruning, k) -> per-split figures of one select_seeds output."""
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 7 and cells[0].startswith("decision_tree"):
            out[(cells[0], cells[1], cells[3])] = [float(c) for c in cells[4:-3]]
    return out


print("| table | pruning | k | tree A derived | distilled (SE) | distilled splits < 92% |")
print("|---|---|---:|---:|---:|---:|")
for table in ("opencl-by-problem", "opencl-by-size", "cuda-by-problem", "cuda-by-size"):
    first, second = rows(HERE / f"{table}-0-19.md"), rows(HERE / f"{table}-20-39.md")
    for clf, pruning, k in first:
        if clf != "decision_tree_distilled_derived":
            continue
        new = np.array(first[(clf, pruning, k)] + second[(clf, pruning, k)])
        key = ("decision_tree_a_derived", pruning, k)
        old = np.array(first[key] + second[key])
        se = new.std(ddof=1) / np.sqrt(len(new))
        print(
            f"| {table} | {pruning} | {k} | {old.mean():.1f} | {new.mean():.1f} ({se:.2f}) "
            f"| {(new < 92).sum()} of {len(new)} |"
        )

# Splits 40-59 (greedy sets, k = 8, the distilled tree only), run after the page's first
# version: with 20-39, forty splits that played no part in choosing the setting.
print()
print("| table | splits 0-19 (setting chosen here) | check splits 20-59 (SE) | all 60 (SE) |")
print("|---|---:|---:|---:|")
for table in ("opencl-by-problem", "opencl-by-size", "cuda-by-problem", "cuda-by-size"):
    key = ("decision_tree_distilled_derived", "greedy", "8")
    parts = [rows(HERE / f"{table}-{s}.md")[key] for s in ("0-19", "20-39", "40-59")]
    check, every = np.array(parts[1] + parts[2]), np.array(parts[0] + parts[1] + parts[2])
    se = [a.std(ddof=1) / np.sqrt(len(a)) for a in (check, every)]
    print(
        f"| {table} | {np.mean(parts[0]):.1f} | {check.mean():.1f} ({se[0]:.2f}) "
        f"| {every.mean():.1f} ({se[1]:.2f}) |"
    )
