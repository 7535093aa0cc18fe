"""Kernel-subset pipelines on several train/test splits of one table (how much a figure moves
between splits).

    python experiments/2026-11-22-lawson-gemm-h100-derived-features/select_seeds.py [--data FILE] [--seeds 0-4] [--kernels 6,8]
        [--normalisations relative] [--prunings top_n,kmeans,spectral,hdbscan]
        [--classifiers decision_tree_a,decision_tree_b,decision_tree_a_derived,decision_tree_b_derived]
        [--group-by M,N,K,batch]

For every seed, ``perfport.select.evaluate`` with that seed (a seeded 80/20 split of the
problems; the seed also seeds clustering and the trees), then one markdown row per
(classifier, pruning, normalisation, k): the performance on each split (% of the optimum,
geometric mean over held-out problems), their mean, min, and the mean max achievable. Default
data: the shipped H100 GEMM table. ``--group-by M,N,K,batch`` splits by size, so that the
transposed variants of one GEMM size are all in training or all held out.
"""

from __future__ import annotations

import argparse
import time
from importlib import resources

import numpy as np

from perfport.select import evaluate, load_csv

SHIPPED = ("datasets", "lawson-gemm", "h100-nvidia-opencl.csv.gz")


def _range(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a table (.csv.gz); default: the shipped H100 GEMM data")
    parser.add_argument("--seeds", default="0-4", help="a range like 0-4")
    parser.add_argument("--kernels", default="6,8")
    parser.add_argument("--normalisations", default="relative")
    parser.add_argument("--prunings", default="top_n,kmeans,spectral,hdbscan")
    parser.add_argument(
        "--classifiers",
        default="decision_tree_a,decision_tree_b,decision_tree_a_derived,decision_tree_b_derived",
    )
    parser.add_argument("--group-by", help="problem names whose equal values stay together")
    args = parser.parse_args()
    group_by = args.group_by.split(",") if args.group_by else None
    if args.data:
        table = load_csv(args.data)
    else:
        with resources.as_file(resources.files("perfport").joinpath(*SHIPPED)) as path:
            table = load_csv(path)
    seeds = _range(args.seeds)
    started = time.perf_counter()
    cells: dict[tuple[str, str, str, int], list[tuple[float, float]]] = {}
    for seed in seeds:
        for r in evaluate(
            table,
            args.normalisations.split(","),
            args.prunings.split(","),
            args.classifiers.split(","),
            [int(k) for k in args.kernels.split(",")],
            seed=seed,
            group_by=group_by,
        ):
            key = (r.classifier, r.pruning, r.normalisation, r.k)
            cells.setdefault(key, []).append((r.performance, r.max_achievable))
    print(
        f"{table.kernel} on {table.device}: {table.n_problems} problems, seeds {args.seeds}, "
        f"split {'by ' + args.group_by if group_by else 'by problem'} "
        f"({time.perf_counter() - started:.0f} s)\n"
    )
    head = " | ".join(f"seed {s}" for s in seeds)
    print(f"| classifier | pruning | normalisation | k | {head} | mean | min | max achievable |")
    print("|---|---|---|---:|" + "---:|" * (len(seeds) + 3))
    for (classifier, pruning, norm, k), values in cells.items():
        perf = np.array([v[0] for v in values]) * 100
        limit = np.mean([v[1] for v in values]) * 100
        row = " | ".join(f"{p:.1f}" for p in perf)
        print(
            f"| {classifier} | {pruning} | {norm} | {k} | {row} | **{perf.mean():.1f}** | "
            f"{perf.min():.1f} | {limit:.1f} |"
        )


if __name__ == "__main__":
    main()
