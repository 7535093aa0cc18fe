"""What `wg predict` costs for a scenario it has not seen: the kernel features' PoCL compile,
the same features read back from the on-disk feature cache, and the compile-free features;
each for fresh described stencils (a new source each, so nothing is remembered). Writes
feature_cost.json beside this script.

    python experiments/2026-11-26-described-stencils/feature_cost.py [--stencils 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from perfport.devices import get_device
from perfport.features import COMPILE_FREE_FEATURES, FeatureCache, ir, scenario_features
from perfport.kernels import described_stencil


def stencil(i: int) -> dict[str, object]:
    # A 3 x 3 weighted box whose weight differs per stencil: a new source, a new compile.
    body = (
        "ELEM s = 0; "
        + " ".join(
            f"s += GET({dx}, {dy}) * (ELEM){i + 1}.5f;" for dy in (-1, 0, 1) for dx in (-1, 0, 1)
        )
        + " return (OUT)s;"
    )
    return {"name": f"cost{i}", "body": body, "north": 1, "south": 1, "east": 1, "west": 1}


def timed(*call: Any) -> float:
    """Milliseconds of scenario_features(*call)."""
    started = time.perf_counter()
    scenario_features(*call)
    return (time.perf_counter() - started) * 1000.0


def measure(n: int) -> dict[str, object]:
    device = get_device(None)
    problem = {"width": 2048, "height": 2048}
    compile_ms, cached_ms, free_ms = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        cache = FeatureCache(folder)
        scenario_features(described_stencil(stencil(999)), problem, device, cache)  # warm PoCL
        for i in range(n):
            spec = described_stencil(stencil(i))
            compile_ms.append(timed(spec, problem, device, cache))
            ir._CACHE.clear()  # as a new process: only the disk remembers
            cached_ms.append(timed(spec, problem, device, cache))
            free_ms.append(timed(spec, problem, device, None, COMPILE_FREE_FEATURES))
    return {
        "device": device.name,
        "host": platform.node(),
        "stencils": n,
        "compile_ms": compile_ms,
        "disk_cache_ms": cached_ms,
        "compile_free_ms": free_ms,
        "median": {
            "compile_ms": statistics.median(compile_ms),
            "disk_cache_ms": statistics.median(cached_ms),
            "compile_free_ms": statistics.median(free_ms),
        },
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stencils", type=int, default=5)
    out = measure(parser.parse_args().stencils)
    (Path(__file__).parent / "feature_cost.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["median"]))
