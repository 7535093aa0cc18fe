"""Which test scenarios ``DeviceNovelty`` (p < 0.05) finds novel, per partition and held-out
kernel: those get the fixed-size fallback in ``performance_forest+novel``.

    python docs/results/2026-11-23-wg-novel/novel_counts.py
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from perfport.wg import folds, load_dataset
from perfport.wg.predictors.novelty import DeviceNovelty

DATA = Path(__file__).parents[3] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"


def main() -> None:
    data = load_dataset(DATA)
    for partition in ("kernel", "synthetic-real", "device", "dataset"):
        novel, total = Counter(), Counter()
        for train, test in folds(data, partition):
            novelty = DeviceNovelty(0.05).fit(data.subset(train))
            for s in test:
                total[data.kernel[s]] += 1
                novel[data.kernel[s]] += novelty.novel(data.features[s])
        print(f"{partition}: {sum(novel.values())} of {sum(total.values())} novel; "
              + ", ".join(f"{k} {novel[k]}/{total[k]}" for k in sorted(total)))  # fmt: skip


if __name__ == "__main__":
    main()
