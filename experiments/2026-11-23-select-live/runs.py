"""Two live runs of one bundle compared: how often the fastest shipped configuration is the
same, and the ratio of their times (run 1 over run 2) per shape and configuration.

    python experiments/2026-11-23-select-live/runs.py RUN1.json RUN2.json
"""

import json
import sys
from pathlib import Path

import numpy as np

one, two = (json.loads(Path(p).read_text())["problems"] for p in sys.argv[1:3])
same = np.mean(
    [np.argmin(a["live_ms"]) == np.argmin(b["live_ms"]) for a, b in zip(one, two, strict=True)]
)
ratio = np.concatenate(
    [np.array(a["live_ms"]) / np.array(b["live_ms"]) for a, b in zip(one, two, strict=True)]
)
low, high = np.percentile(ratio, [5, 95])
print(f"fastest shipped the same in both runs: {same:.3f} of {len(one)} shapes")
print(f"run 1 / run 2 times: median {np.median(ratio):.3f}, 5-95%: {low:.3f}-{high:.3f}")
