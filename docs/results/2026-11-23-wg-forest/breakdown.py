"""Per device set-up: the forest against the kNN and against fixed sizes.

    .venv/bin/python docs/results/2026-11-23-wg-forest/breakdown.py [DATASET.npz] [--seed N]

For the leave-one-kernel-out and synthetic-to-real partitions, prints per device set-up the
geometric mean of t_oracle / t_chosen of performance_forest, performance_forest+fixed and
performance_knn+fixed (answered as ``perfport wg evaluate`` does), of the device's best fixed
size learnt from the training folds, and of the device's best fixed size chosen in hindsight
on the test scenarios themselves (an upper bound for any fixed choice). Without an argument,
on the shipped dataset. About a minute on the 2-core machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from perfport.wg import folds, load_dataset, make_predictor
from perfport.wg.evaluate import _choose
from perfport.wg.predictors.vectors import best_fixed as _best_fixed
from perfport.wg.predictors.vectors import performance_vectors as _performance_vectors

DATA = Path(__file__).parents[3] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"
METHODS = ("performance_forest", "performance_forest+fixed", "performance_knn+fixed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", nargs="?", default=DATA)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = load_dataset(args.data)
    vectors = _performance_vectors(data)
    ran = np.where(np.isfinite(data.runtimes), vectors, np.nan)
    columns = (*METHODS, "fixed")
    for partition in ("kernel", "synthetic-real"):
        got = {c: np.full(len(data), np.nan) for c in columns}
        for train, test in folds(data, partition, args.seed):
            fitted = {m: make_predictor(m, args.seed).fit(data.subset(train)) for m in METHODS}
            for s in test:
                for m, predictor in fitted.items():
                    got[m][s] = ran[s, _choose(predictor, data, s)[0]]
                got["fixed"][s] = ran[
                    s, fitted["performance_knn+fixed"]._fixed_for(data.features[s])
                ]
        tested = np.isfinite(got["fixed"])
        print(f"{partition}: {tested.sum()} test scenarios")
        print(f"  {'device':44} {'n':>4} " + " ".join(f"{c[12:] or c:>9}" for c in columns)
              + f" {'hindsight':>9}")  # fmt: skip
        for device in np.unique(data.device):
            rows = tested & (data.device == device)
            if not rows.any():
                continue
            hindsight = np.exp(np.nanmean(ran[rows, _best_fixed(vectors, rows)]))
            cells = [np.exp(np.nanmean(got[c][rows])) for c in columns]
            print(f"  {device[:44]:44} {rows.sum():4d} " + " ".join(f"{c:9.1%}" for c in cells)
                  + f" {hindsight:9.1%}")  # fmt: skip
        print(f"  {'all':44} {tested.sum():4d} " + " ".join(
            f"{np.exp(np.nanmean(got[c][tested])):9.1%}" for c in columns))  # fmt: skip


if __name__ == "__main__":
    main()
