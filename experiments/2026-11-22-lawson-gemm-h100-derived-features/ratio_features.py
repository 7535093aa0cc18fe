"""Tried and not shipped: do shape ratios help the tree selectors with derived features?

    .venv/bin/python experiments/2026-11-22-lawson-gemm-h100-derived-features/ratio_features.py none|ratios|ratios+ai

Adds M/N, K/M, K/N (``ratios``) and K/(M*N) (``ratios+ai``) to the derived features that
``perfport.select.classify`` gives trees A and B (``decision_tree_*_derived``), then evaluates
the relative normalisation with the k-means set at k = 6 and 8 on the shipped H100 GEMM table
over the seeded splits 0-9, as ``experiments/2026-11-22-lawson-gemm-h100-derived-features/select_seeds.py`` does. Prints, per classifier and
k, the mean and minimum over the splits and every split's figure. About 20 s per mode here.
"""

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import perfport.select.classify as classify
from perfport.select import evaluate, load_csv
from perfport.select.derive import default_derived


@dataclass(frozen=True)
class Ratio:
    top: tuple
    bottom: tuple

    @property
    def name(self):
        return "_x_".join(self.top) + "_over_" + "_x_".join(self.bottom)

    inputs = ()

    def values(self, c):
        t = np.prod([np.asarray(c[n], float) for n in self.top], axis=0)
        b = np.prod([np.asarray(c[n], float) for n in self.bottom], axis=0)
        return t / b


mode = sys.argv[1]
extra = {
    "none": [],
    "ratios": [Ratio(("M",), ("N",)), Ratio(("K",), ("M",)), Ratio(("K",), ("N",))],
    "ratios+ai": [
        Ratio(("M",), ("N",)),
        Ratio(("K",), ("M",)),
        Ratio(("K",), ("N",)),
        Ratio(("K",), ("M", "N")),
    ],
}[mode]


def patched(names, rows):
    return tuple(default_derived(names, rows)) + tuple(extra)


classify.default_derived = patched
table = load_csv(
    Path(__file__).parents[2] / "src/perfport/datasets/lawson-gemm/h100-nvidia-opencl.csv.gz"
)
res = {}
for seed in range(10):
    for r in evaluate(
        table,
        ["relative"],
        ["kmeans"],
        ["decision_tree_a_derived", "decision_tree_b_derived"],
        [6, 8],
        seed=seed,
    ):
        res.setdefault((r.classifier, r.k), []).append(r.performance)
for k, v in sorted(res.items()):
    print(mode, k, f"mean {np.mean(v):.3f} min {np.min(v):.3f}", " ".join(f"{x:.3f}" for x in v))
