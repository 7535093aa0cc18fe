"""Held-out caches: region_sweep against prior, per cache, with 90% bootstrap intervals of the
difference of the median evaluations to 95% (seeds resampled within each cache, 2,000 draws,
as benchmarks/prior_relatives.py does for the development caches).

    python experiments/2026-11-27-region-sweep/compare.py /tmp/hub RUNS[,RUNS...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "benchmarks")
import strategies
from prior_relatives import _resampled_medians, to_95

HELD = [
    "convolution/RTX_2080_Ti",
    "convolution/RTX_3060_laptop",
    "convolution/RTX_Titan",
    "convolution_milo/A6000",
    "convolution_milo/W6600",
    "convolution_milo/W7800",
    "dedispersion_milo/A100",
    "dedispersion_milo/A4000",
    "dedispersion_milo/A6000",
    "dedispersion_milo/MI250X",
    "dedispersion_milo/W6600",
    "dedispersion_milo/W7800",
    "gemm/RTX_Titan",
    "pnpoly/RTX_2080_Ti",
    "pnpoly/RTX_3060_laptop",
    "pnpoly/RTX_3090",
    "pnpoly/RTX_Titan",
]


def main() -> None:
    hub = Path(sys.argv[1]) / "kerneltuner-benchmark_hub"
    runs, _ = strategies.load_runs([Path(f) for f in sys.argv[2].split(",")])
    rng = np.random.default_rng(0)
    diffs, rows = [], []
    for label in HELD:
        path = hub / f"{label}.json.gz"
        data = strategies.replay_data(path, strategies.load_cache(path))
        hits = {
            name: to_95(
                [runs[f"perfport|{data.label}|{name}|200|{s}"] for s in range(30)],
                data.optimum,
                200,
            )
            for name in ("prior", "region_sweep")
        }
        d = _resampled_medians(hits["region_sweep"], rng, 2000) - _resampled_medians(
            hits["prior"], rng, 2000
        )
        diffs.append(d)
        low, high = np.percentile(d, [5, 95])
        rows.append(
            f"{label:30}{np.median(hits['prior']):>8g}{np.median(hits['region_sweep']):>8g}"
            f"{low:>9.1f} to {high:.1f}"
        )
    print(f"{'cache':30}{'prior':>8}{'region':>8}  90% interval of region minus prior")
    print("\n".join(rows))
    low, high = np.percentile(np.mean(diffs, 0), [5, 95])
    print(f"{'mean over the 17':46}{low:>9.1f} to {high:.1f}")


if __name__ == "__main__":
    main()
