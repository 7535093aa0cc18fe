"""Each configuration's fraction of the same round's copy of the same bytes, over the rounds
of rounds.sh: median, min and max per device.

    python analyse.py DIR [--size 4096]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path


def copy_at(roofline: dict, moved: float) -> float | None:
    """The copy ladder's GB/s at exactly ``moved`` bytes (None if the ladder lacks it)."""
    for b, g in roofline.get("copy_GBps_by_bytes", []):
        if abs(b - moved) < 1:
            return float(g)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--size", type=int, default=4096)
    args = ap.parse_args()
    moved = 2.0 * 4 * args.size * args.size  # float in, float out
    fractions: dict[tuple[str, str], list[float]] = defaultdict(list)
    for tune_path in sorted(args.dir.glob("tune-*.json")):
        tag = tune_path.stem.removeprefix("tune-")
        device = tag.rsplit("-", 1)[0]
        try:
            results = json.loads((args.dir / f"results-{tag}.json").read_text())
            roof = json.loads((args.dir / f"roofline-{tag}.json").read_text())
        except (OSError, ValueError) as exc:
            print(f"{tag}: skipped ({exc})")
            continue
        copy = copy_at(roof, moved)
        for r in results:
            if r.get("outcome") != "ok" or not r.get("median_ms") or copy is None:
                continue
            c = r["config"]
            name = f"rows={c['rows']} vw={c['vw']} {c['wc']}x{c['wr']}"
            gbps = moved / (r["median_ms"] * 1e-3) / 1e9
            fractions[device, name].append(gbps / copy)
    print(f"{'device':12s} {'configuration':24s} {'n':>2s} {'median':>7s} {'min':>7s} {'max':>7s}")
    for (device, name), fs in sorted(fractions.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"{device:12s} {name:24s} {len(fs):2d} {statistics.median(fs):7.2%} {min(fs):7.2%} {max(fs):7.2%}")


if __name__ == "__main__":
    main()
