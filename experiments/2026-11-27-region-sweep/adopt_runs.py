"""Move the stored benchmark runs to the new default (prior keeping to its region).

Runs are keyed by strategy name, so the runs `prior` made before the region (picks, then
bayes_sweep anywhere) would otherwise stand for the new default. They move to an archive
(later --runs files win, so naming it last reproduces the earlier pages) and this
experiment's runs of the new default take their keys. Only the five caches with a relative
change: without scores the default is bayes_sweep, as before. Run once, from the repository
root:

    python experiments/2026-11-27-region-sweep/adopt_runs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
from strategies import read_runs as read
from strategies import write_runs as write

RESULTS = Path("benchmarks/results")
HERE = Path(__file__).parent
ARCHIVE = RESULTS / "prior-sweep-runs-2026-11-27.json.gz"
RELATIVES = (
    "convolution_milo/A100",
    "convolution_milo/A4000",
    "convolution_milo/MI250X",
    "gemm/RTX_2080_Ti",
    "gemm/RTX_3090",
)


def new_runs() -> dict[str, list[float]]:
    """The new default's runs under the keys the benchmarks read."""
    out = {}
    for key, value in read(HERE / "callA" / "dev-runs.json.gz").items():
        _, label, spec, seed = key.split("|")
        condition = spec.removeprefix("prior_region@").split(":")[0]
        if condition == "relatives":  # benchmarks/strategies.py's key for the same run
            out[f"perfport|{label}|prior|200|{seed}"] = value
        else:  # failing, poor: benchmarks/prior_relatives.py's
            out[f"relatives|{label}|{condition}|{seed}"] = value
    out.update(read(HERE / "call500" / "runs500.json.gz"))  # perfport|label|prior|500|seed
    return out


def main() -> None:
    fresh = new_runs()
    archive = read(ARCHIVE) if ARCHIVE.exists() else {}
    for name in (
        "strategies-runs.json.gz",
        "strategies-500-runs-2026-11-27.json.gz",
        "prior-relatives-runs-2026-11-26.json.gz",
    ):
        path = RESULTS / name
        runs = read(path)
        moved = 0
        for key in [k for k in runs if k in fresh]:
            assert key.split("|")[1] in RELATIVES, key
            archive.setdefault(key, runs[key])
            runs[key] = fresh[key]
            moved += 1
        write(path, runs)
        print(f"{name}: {moved} runs replaced")
    write(ARCHIVE, archive)
    print(f"{ARCHIVE}: {len(archive)} runs")
    held = {}
    for call in ("callA", "callB"):
        for key, value in read(HERE / call / "heldout-runs.json.gz").items():
            held[key.replace("|region_sweep|", "|prior|")] = value
    write(HERE / "heldout-prior-runs.json.gz", held)
    print(f"heldout-prior-runs.json.gz: {len(held)} runs")


if __name__ == "__main__":
    main()
