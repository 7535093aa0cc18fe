"""Seconds per sub-group local load by lid(0) stride and work-group layout, from
``perfport model collect --json`` outputs of ``lmem_stride_pattern`` (gpu_run.sh here): the
slope between the smallest and the largest m at each nel, as a multiple of stride 1's.

    python experiments/2026-11-26-model-gpu-e/analyse.py OUT [--reference COLLECT_JSON]

``--reference`` (default GPU session d's collect-lmem-stride.json) is compared with this run's
1-D layout: the same kernels on another H200, which says whether the two runs can be mixed.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

SESSION_D = (
    Path(__file__).parents[1] / "2026-11-26-gpu-session-d/callB/model/collect-lmem-stride.json"
)
SUBGROUP = 32


def slopes(path: Path) -> dict[int, float]:
    """Median over nel of seconds per sub-group load, by lid(0) stride."""
    times: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)
    for r in json.loads(path.read_text())["results"]:
        if r.get("time_ms") is None:
            continue
        a = r["args"]
        times[a["lid_stride_0"], a["nel"]][a["m"]] = r["time_ms"]
    found: dict[int, list[float]] = defaultdict(list)
    for (stride, nel), by_m in times.items():
        if len(by_m) < 2:
            continue
        low, high = min(by_m), max(by_m)
        found[stride].append((by_m[high] - by_m[low]) * 1e-3 / ((high - low) * nel / SUBGROUP))
    return {s: statistics.median(v) for s, v in sorted(found.items())}


def table(rows: dict[str, dict[int, float]]) -> str:
    strides = sorted({s for r in rows.values() for s in r})
    out = ["| layout | " + " | ".join(f"stride {s}" for s in strides) + " |",
           "|---|" + "---:|" * len(strides)]  # fmt: skip
    for name, r in rows.items():
        base = r.get(1)
        cells = [f"{r[s]:.3g} s ({r[s] / base:.1f}x)" if s in r and base else "-" for s in strides]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path, help="gpu_run.sh's OUT folder")
    parser.add_argument("--reference", type=Path, default=SESSION_D)
    args = parser.parse_args()
    rows = {}
    for name, file in [("16 x 16", "collect-2d.json"), ("256 (this run)", "collect-1d.json")]:
        if (args.out / file).is_file():
            rows[name] = slopes(args.out / file)
    if args.reference.is_file():
        rows["256 (reference)"] = slopes(args.reference)
    print(table(rows))


if __name__ == "__main__":
    main()
