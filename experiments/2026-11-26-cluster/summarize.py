"""Summarise benchmarks/scaling.py --json output: per run, wall per trial and overhead per
trial (slots x wall - the time trials kept a device busy, over the trials); the ratio."""

from __future__ import annotations

import json
import sys


def main(path: str, mode: str) -> None:
    with open(path) as f:
        data = json.load(f)
    for r in data["runs"]:
        per = 1000 * r["wall_s"] / r["trials"]
        overhead = 1000 * (r["slots"] * r["wall_s"] - r["busy_s"]) / r["trials"]
        print(
            f"{mode}: {r['slots']} GPU(s): {r['trials']} trials in {r['wall_s']:.1f} s, "
            f"{per:.1f} ms wall per trial, {overhead:.1f} ms overhead per trial"
        )
    if data["ratio"] is not None:  # both runs in one call
        print(f"{mode}: ratio wall(1 GPU) / wall(2 GPUs): {data['ratio']:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
