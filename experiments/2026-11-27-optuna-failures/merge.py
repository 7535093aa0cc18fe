"""The 2026-11-26 Optuna runs with this call's runs of the three caches holding failures put in
their place: benchmarks/results/optuna-runs-2026-11-27.json.gz. The other three caches have
no failed configuration, so the change cannot move their runs."""

import gzip
import json
import sys
from pathlib import Path

results = Path(__file__).parents[2] / "benchmarks" / "results"
runs = json.load(gzip.open(results / "optuna-runs-2026-11-26.json.gz"))
for new in sys.argv[1:]:  # this call's optuna-runs.json.gz and gp-runs.json.gz
    runs.update(json.load(gzip.open(new)))
with gzip.open(results / "optuna-runs-2026-11-27.json.gz", "wt") as out:
    json.dump(runs, out)
