"""One proposal of the default model, fitted on all of the shipped dataset: the median and 99th
percentile over every seventh scenario, three passes, for each method named (default: the
plain forest and the forest with the novelty-gated fallback).

    python docs/results/2026-11-23-wg-novel/proposal_time.py [METHOD ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from perfport.wg import load_dataset, make_predictor

DATA = Path(__file__).parents[3] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"


def main() -> None:
    data = load_dataset(DATA)
    for method in sys.argv[1:] or ["performance_forest", "performance_forest+novel"]:
        model = make_predictor(method).fit(data)
        times = []
        for _ in range(3):
            for s in range(0, len(data), 7):
                started = time.perf_counter()
                model.propose(data.features[s], int(data.max_wg[s]), set())
                times.append((time.perf_counter() - started) * 1000)
        print(f"{method}, {len(data)} scenarios: one proposal {np.median(times):.3f} ms median, "
              f"{np.percentile(times, 99):.3f} ms p99")  # fmt: skip


if __name__ == "__main__":
    main()
