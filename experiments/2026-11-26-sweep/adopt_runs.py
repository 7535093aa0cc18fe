"""Move the stored benchmark runs to the new default (prior continuing with bayes_sweep).

Runs are keyed by strategy name, so the runs `prior` made while it continued with bayes_rf
would otherwise stand for the new default. They move to an archive file (later --runs files
win, so naming it last reproduces the earlier pages), and the new default's runs, made by this
experiment's commands (README.md), take their keys. Run once, from the repository root:

    python experiments/2026-11-26-sweep/adopt_runs.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

RESULTS = Path("benchmarks/results")
HERE = Path(__file__).parent
ARCHIVE = RESULTS / "prior-bayes-rf-runs-2026-11-26.json.gz"
# Conditions of benchmarks/prior_relatives.py whose runs are prior's (or cold: prior without
# scores): all made with the bayes_rf continuation.
PRIOR_CONDITIONS = ("cold", "relatives", "failing", "poor")
# Every stored run file holding such runs (some hold copies of the runs they were read with).
STORED = (
    "strategies-runs.json.gz",
    "prior-relatives-runs-2026-11-26.json.gz",
    "prior-region-runs-2026-11-26.json.gz",
    "prior-transfer-runs-2026-11-26.json.gz",
    "prior-transfer-nofeature-runs-2026-11-26.json.gz",
    "search-thompson-runs-2026-11-26.json.gz",
    "search-thompson-heldout-runs-2026-11-26.json.gz",
)


def read(path: Path) -> dict[str, list[float]]:
    with gzip.open(path, "rt") as f:
        return json.load(f)  # type: ignore[no-any-return]


def write(path: Path, runs: dict[str, list[float]]) -> None:
    with gzip.open(path, "wt") as f:
        json.dump(runs, f)


def stale(key: str) -> bool:
    parts = key.split("|")
    if parts[0] == "perfport":
        return parts[2] == "prior"
    return parts[0] == "relatives" and parts[2] in PRIOR_CONDITIONS


def main() -> None:
    archive: dict[str, list[float]] = {}
    for name in STORED:
        path = RESULTS / name
        runs = read(path)
        for key in [k for k in runs if stale(k)]:
            value = runs.pop(key)
            assert archive.setdefault(key, value) == value, f"two different runs for {key}"
        if name == "strategies-runs.json.gz":
            cold = read(HERE / "runs.json.gz")  # benchmarks/cold_start.py's, 30 seeds
            relatives = read(HERE / "relatives-runs.json.gz")  # prior_relatives.py's
            for key, value in cold.items():
                _, label, spec, top, seed = key.split("|")
                if spec == "bayes_sweep:stall=10":
                    runs[f"perfport|{label}|bayes_sweep|{top}|{seed}"] = value
                    if label == "convolution/RTX_3090":  # no relative: prior is bayes_sweep
                        runs[f"perfport|{label}|prior|{top}|{seed}"] = value
            for key, value in relatives.items():
                _, label, spec, seed = key.split("|")
                if spec == "relatives:stall=10":
                    runs[f"perfport|{label}|prior|200|{seed}"] = value
        if name == "prior-relatives-runs-2026-11-26.json.gz":
            relatives = read(HERE / "relatives-runs.json.gz")
            for key, value in relatives.items():
                _, label, spec, seed = key.split("|")
                if spec in ("failing:stall=10", "poor:stall=10"):
                    runs[f"relatives|{label}|{spec.split(':')[0]}|{seed}"] = value
        write(path, runs)
        print(f"{name}: {len(runs)} runs")
    # The cold condition of prior_relatives.py was prior without scores, i.e. bayes_rf: its
    # runs for every seed, so the earlier pages' 30-seed tables come back from the archive.
    bayes_rf = read(RESULTS / "strategies-runs.json.gz")
    for key, value in bayes_rf.items():
        _, label, spec, _, seed = key.split("|")
        if spec == "bayes_rf" and f"relatives|{label}|relatives|0" in archive:
            archive.setdefault(f"relatives|{label}|cold|{seed}", value)
    write(ARCHIVE, archive)
    print(f"{ARCHIVE.name}: {len(archive)} runs")


if __name__ == "__main__":
    main()
