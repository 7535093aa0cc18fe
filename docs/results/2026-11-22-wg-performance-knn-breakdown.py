"""Where performance_knn loses on perfport's stencil dataset: per device, per partition.

    .venv/bin/python docs/results/2026-11-22-wg-performance-knn-breakdown.py [DATASET.npz]

For the leave-one-kernel-out and synthetic-to-real partitions, prints per device the geometric
mean of t_oracle / t_chosen of performance_knn and performance_knn+fixed (answered as
``perfport wg evaluate`` does), of the device's best fixed size learnt from the training
folds, and of the device's best fixed size chosen in hindsight on the test scenarios themselves
(an upper bound for any fixed choice). Then each device's share of the total log loss.
Without an argument, on the shipped dataset.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from perfport.wg import WgPerformanceKnn, folds, load_dataset
from perfport.wg.evaluate import _choose
from perfport.wg.predictors.vectors import best_fixed as _best_fixed
from perfport.wg.predictors.vectors import performance_vectors as _performance_vectors

DATA = Path(__file__).parents[2] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"


def main() -> None:
    data = load_dataset(sys.argv[1] if len(sys.argv) > 1 else DATA)
    vectors = _performance_vectors(data)
    ran = np.where(np.isfinite(data.runtimes), vectors, np.nan)
    devices = np.unique(data.device)
    for partition in ("kernel", "synthetic-real"):
        got = {m: np.full(len(data), np.nan) for m in ("knn", "knn+fixed", "fixed")}
        for train, test in folds(data, partition):
            plain = WgPerformanceKnn().fit(data.subset(train))
            safe = WgPerformanceKnn(fallback=True).fit(data.subset(train))
            for s in test:
                got["knn"][s] = ran[s, _choose(plain, data, s)[0]]
                got["knn+fixed"][s] = ran[s, _choose(safe, data, s)[0]]
                got["fixed"][s] = ran[s, safe._fixed_for(data.features[s])]
        tested = np.isfinite(got["knn"])
        print(f"{partition}: {tested.sum()} test scenarios")
        print(f"  {'device':44} {'n':>4} {'knn':>7} {'+fixed':>7} {'fixed':>7} {'hindsight':>9}")
        total = np.nansum(got["knn+fixed"][tested])
        for device in devices:
            rows = tested & (data.device == device)
            if not rows.any():
                continue
            hindsight = ran[rows, _best_fixed(vectors, rows)]
            cells = [np.exp(np.nanmean(got[m][rows])) for m in ("knn", "knn+fixed", "fixed")]
            share = np.nansum(got["knn+fixed"][rows]) / total
            print(f"  {device[:44]:44} {rows.sum():4d} " + " ".join(f"{c:7.1%}" for c in cells)
                  + f" {np.exp(np.nanmean(hindsight)):9.1%}   {share:.0%} of the loss")  # fmt: skip
        print(f"  {'all':44} {tested.sum():4d} " + " ".join(
            f"{np.exp(np.nanmean(got[m][tested])):7.1%}" for m in ("knn", "knn+fixed", "fixed")))  # fmt: skip


if __name__ == "__main__":
    main()
