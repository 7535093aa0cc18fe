"""Add this experiment's budget-500 runs to benchmarks/results/strategies-500-runs-2026-11-27.json.gz,
the file benchmarks/strategies.py reads them from (a run already there must be the same run).
From the repository root, once every run is made:

    python experiments/2026-11-27-budget500-all/merge.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
from strategies import read_runs as read
from strategies import write_runs as write

HERE = Path(__file__).parent
TARGET = Path("benchmarks/results/strategies-500-runs-2026-11-27.json.gz")
SOURCES = (
    HERE / "local" / "cheap.json.gz",  # random, grid, local_search, annealing, genetic, diff_evo
    HERE / "call3" / "runs.json.gz",  # the GPU machine's three calls (each resumed the last's)
    HERE / "local" / "alt.json.gz",  # bayes_alt's runs the third call left
    # Seeds 10-29 of the ten-seed strategies (a second session, 2026-11-27 06:49-07:14 UTC):
    HERE / "call7" / "runs.json.gz",  # calls 4-7 on the GPU machine (each resumed the last's)
    HERE / "local" / "region30.json.gz",  # prior_region on the 2-core machine
    # optuna_gp and Kernel Tuner's bayes_opt (a third session, 2026-11-27 08:44-09:29 UTC):
    HERE.parent / "2026-11-27-budget500-gp" / "call5" / "runs.json.gz",
)


def main() -> None:
    runs = read(TARGET)
    added = 0
    for source in SOURCES:
        for key, value in read(source).items():
            if key in runs:
                assert runs[key] == value, f"{key}: two different runs"
                continue
            runs[key] = value
            added += 1
    write(TARGET, runs)
    print(f"{TARGET}: {added} runs added, {len(runs)} in all")


if __name__ == "__main__":
    main()
