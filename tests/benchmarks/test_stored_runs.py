"""The stored runs of benchmarks/strategies.py are what the strategies do now.

Runs are stored under strategy names, so a strategy whose behaviour changes would leave its
runs standing for code that no longer exists (as ``prior``'s did when it began to continue
with ``bayes_sweep``: they were moved to an archive, docs/results/2026-11-26-bayes-sweep.md).
Each perfport strategy of the protocol replays the first evaluations of one stored run here,
on the cache that has no relative (so ``prior`` needs no store); a change of behaviour must
come with new runs.
"""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np
import pytest

from conftest import BENCHMARKS, SHARED
from perfport.strategies import STRATEGIES
from perfport.tune.replay import simulate

RUNS = BENCHMARKS / "results" / "strategies-runs.json.gz"
CACHE = SHARED / "kerneltuner-benchmark_hub" / "convolution" / "RTX_3090.json.gz"
EVALUATIONS = 60  # past bayes_sweep's first sweep on this cache


@pytest.fixture(scope="module")
def stored() -> dict[str, list[float]]:
    with gzip.open(RUNS, "rt") as f:
        return json.load(f)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def data():  # the cache, as the protocol replays it
    if not CACHE.is_file():
        pytest.skip(f"the Kernel Tuner caches are not beside the checkout ({CACHE})")
    sys.path.insert(0, str(BENCHMARKS))
    import strategies as protocol

    return protocol.replay_data(CACHE, protocol.load_cache(CACHE))


@pytest.mark.parametrize(
    "name",
    ["random", "grid", "local_search", "annealing", "genetic", "diff_evo", "bayes_opt",
     "bayes_tr", "bayes_rf", "bayes_sweep", "prior"],
)  # fmt: skip
def test_a_stored_run_replays_as_stored(stored, data, name):
    key = f"perfport|{data.label}|{name}|200|0"
    now = simulate(data, STRATEGIES[name], EVALUATIONS, 0)
    then = np.array(stored[key][:EVALUATIONS], dtype=np.float64)
    assert np.allclose(now, then, equal_nan=True), f"{key}: the strategy changed since its runs"
