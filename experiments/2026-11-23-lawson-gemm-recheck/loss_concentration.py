"""Where a k-set tree selector loses on held-out GEMM shapes: ten seeded splits, k-means set
of 8, tree A with derived features; the share of the total log loss carried by the worst 10%
of held-out shapes, and the worst picks.

    python experiments/2026-11-23-lawson-gemm-recheck/loss_concentration.py [TABLE.csv.gz]

Without an argument: the shipped H100 NVIDIA OpenCL table. Run on the table before the
re-check (git show 6a51704~3:src/perfport/datasets/lawson-gemm/h100-nvidia-opencl.csv.gz)
for the figures the results page quotes.
"""

import sys

import numpy as np

from perfport.select import Selector, load_csv
from perfport.select.classify import best_in_set
from perfport.select.evaluate import split_problems
from perfport.select.normalise import relative
from perfport.select.prune import choose

path = (
    sys.argv[1]
    if len(sys.argv) > 1
    else "src/perfport/datasets/lawson-gemm/h100-nvidia-opencl.csv.gz"
)
table = load_csv(path)
losses = []
for seed in range(10):
    train, test = split_problems(table, 0.2, seed)
    perf_train = np.nan_to_num(relative(table.times[train]))
    perf_test = np.nan_to_num(relative(table.times[test]))
    chosen = choose(perf_train, 8, "kmeans", seed)
    selector = Selector("decision_tree_a_derived", seed).fit(
        table.problems[train], best_in_set(table.times[train], chosen), table.problem_names
    )
    picks = chosen[selector.predict(table.problems[test])]
    got = perf_test[np.arange(len(test)), picks]
    best = perf_test[:, chosen].max(axis=1)
    for i, row in enumerate(test):
        losses.append((float(np.log(best[i] / got[i])), seed, int(row), int(picks[i]), got[i]))
loss = np.array([x[0] for x in losses])
order = np.argsort(-loss)
print(f"{len(loss)} held-out shapes over 10 splits; total log loss {loss.sum():.2f}")
print(
    f"worst 10% carry {loss[order[: len(loss) // 10]].sum() / loss.sum():.0%} of it; "
    f"the worst two {loss[order[:2]].sum() / loss.sum():.0%}"
)
for j in order[:5]:
    _, seed, row, pick, got = losses[j]
    shape = dict(zip(table.problem_names, table.problems[row].astype(int).tolist(), strict=True))
    print(
        f"  seed {seed}: {shape} chose {table.configs[pick]} at {table.times[row, pick]} ms, "
        f"{got:.3f} of the optimum"
    )
