"""Which measured kernels' local-load counts the issued count (hoist.py) changes.

Counts every kernel of the conflicts study's data.csv (no GPU) and prints, per kernel and
variant, the local accesses where the issued count differs from loopy's, at the run's sizes.

    PYTHONPATH=src python experiments/2026-11-26-model-hoist/check_issued.py > \
        experiments/2026-11-26-model-hoist/issued.txt
"""

from __future__ import annotations

from pathlib import Path

from perfport.model.dataset import KernelFeatures, read_data

DATA = Path(__file__).parent.parent / "2026-11-26-model-conflicts" / "data.csv"


def main() -> None:
    features = KernelFeatures()
    runs = read_data(DATA)
    seen: set[tuple[str, str]] = set()
    changed = 0
    for run in runs:
        key = (run.kernel, run.problem.key)
        if key in seen:
            continue
        seen.add(key)
        stats = features.stats(run.kernel, run.problem)
        for m in stats.mem:
            if m.issued != m.count:
                changed += 1
                print(f"{run.kernel} {run.problem.key} {m.pattern.mtype} {m.pattern.variable} "
                      f"{m.pattern.direction}: loopy {m.count:g}, issued {m.issued:g}")
    mk = sum(1 for k, _ in seen if k.startswith("mk-"))
    print(f"{len(seen)} kernels at their sizes ({mk} mk-, {len(seen) - mk} app-); "
          f"{changed} access patterns changed")


if __name__ == "__main__":
    main()
