"""How far down the relatives' ranking the configurations within 5% of each development
cache's optimum sit: the configurations of each cache ranked by a relative's times (the same
kernel on another GPU), the first places that reach 95% of the cache's own optimum.

    python experiments/2026-11-27-hub-checks/relatives_rank.py ../shared/data > relatives_rank.txt
"""

import gzip
import json
import sys
from pathlib import Path

import numpy as np

HUB = Path(sys.argv[1]) / "kerneltuner-benchmark_hub"
PAIRS = [
    ("gemm/RTX_2080_Ti", ["gemm/RTX_3090"]),
    ("gemm/RTX_3090", ["gemm/RTX_2080_Ti"]),
    ("convolution_milo/A100", ["convolution_milo/A4000", "convolution_milo/MI250X"]),
    ("convolution_milo/A4000", ["convolution_milo/A100", "convolution_milo/MI250X"]),
    ("convolution_milo/MI250X", ["convolution_milo/A100", "convolution_milo/A4000"]),
]


def times(cache: str) -> dict[str, float]:
    with gzip.open(HUB / f"{cache}.json.gz") as f:
        data = json.load(f)
    return {
        k: np.nan if isinstance(v["time"], str) else v["time"] for k, v in data["cache"].items()
    }


for target, relatives in PAIRS:
    own = times(target)
    keys = list(own)
    t = np.array([own[k] for k in keys])
    fraction = np.nan_to_num(np.nanmin(t) / t)
    print(
        f"{target}: {len(t)} configurations, {int((fraction >= 0.95).sum())} within 5% "
        f"of the optimum, {int((fraction >= 0.9).sum())} within 10%"
    )
    for relative in relatives:
        other = times(relative)
        r = np.array([other.get(k, np.nan) for k in keys])
        order = np.argsort(np.where(np.isfinite(r), r, np.inf), kind="stable")
        first = np.flatnonzero(fraction[order] >= 0.95)[:3] + 1
        print(
            f"  ranked by {relative}: within 5% at places {', '.join(map(str, first))}; "
            f"best of its top 10 {fraction[order[:10]].max():.2f}, top 50 "
            f"{fraction[order[:50]].max():.2f}"
        )
