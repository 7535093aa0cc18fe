"""Whether a loop-invariant local load costs what the issued-load rule says, and how FD's
shape scales with the work-group size, from gpu_run.sh's ``perfport model collect --json``
outputs (no GPU).

    python experiments/2026-11-26-model-gpu-f/analyse.py OUT

Hoisting (collect-hoist.json): per variant and nel, the time per work-item per iteration of
the loop over m (slope between the smallest and the largest m). All three variants do the
same adds; ``dependent`` issues ``trips`` local loads per iteration, ``manual`` one. The rule
says ``invariant`` issues one, that is the dependent variant's local-load cost divided by
``trips``: the fraction (invariant - manual) / (dependent - manual) is 0 if the compiler
hoists as the rule says and 1 if it does not.

Group sizes (collect-groups.json): time per work-item by 1-D group size, as a multiple of
the 256 that every calibration kernel uses, beside the groups resident per SM if the limits
are 2048 threads and 32 groups per SM (H100 and H200; an assumption, not read from the run).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

THREADS_PER_SM, GROUPS_PER_SM = 2048, 32
HOLDS, FAILS = 0.15, 0.85  # fraction bands read as "hoisted" and "not hoisted"


def _rows(path: Path) -> list[dict]:
    return [r for r in json.loads(path.read_text())["results"] if r.get("time_ms") is not None]


def hoist_slopes(path: Path) -> tuple[dict[str, float], int]:
    """Median over nel of seconds per work-item per outer iteration, by variant; trips."""
    times: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    trips = 0
    for r in _rows(path):
        a = r["args"]
        trips = a["trips"]
        times[a["index"], a["nel"]][a["m"]] = r["time_ms"]
    found: dict[str, list[float]] = defaultdict(list)
    for (index, nel), by_m in times.items():
        if len(by_m) >= 2:
            low, high = min(by_m), max(by_m)
            found[index].append((by_m[high] - by_m[low]) * 1e-3 / ((high - low) * nel))
    return {i: statistics.median(v) for i, v in sorted(found.items())}, trips


def hoist_report(path: Path) -> str:
    slopes, trips = hoist_slopes(path)
    if not {"invariant", "dependent", "manual"} <= set(slopes):
        return f"{path.name}: not every variant has two m values; nothing to compare"
    lines = [f"| variant | s per work-item per iteration (trips {trips}) |", "|---|---:|"]
    lines += [f"| {i} | {v:.3g} |" for i, v in slopes.items()]
    extra = slopes["dependent"] - slopes["manual"]  # the cost of trips - 1 local loads
    if extra <= 0:
        return "\n".join([*lines, "", "dependent is not slower than manual: loads not resolved"])
    fraction = (slopes["invariant"] - slopes["manual"]) / extra
    per_load = extra / (trips - 1)
    verdict = (
        "the rule holds: the invariant load is issued once per iteration"
        if abs(fraction) <= HOLDS
        else "not hoisted: loopy's count holds"
        if fraction >= FAILS
        else "partly hoisted: neither count holds"
    )
    return "\n".join([
        *lines, "",
        f"local load: {per_load:.3g} s per work-item (dependent - manual, over {trips - 1})",
        f"invariant's local-load cost: {slopes['invariant'] - slopes['manual'] + per_load:.3g} s "
        f"(the rule: {per_load:.3g}, the dependent's {trips * per_load:.3g} / {trips}; "
        f"loopy's count: {trips * per_load:.3g})",
        f"fraction (invariant - manual) / (dependent - manual) = {fraction:.2f}: {verdict}",
    ])  # fmt: skip


def resident(group: int) -> int:
    return min(GROUPS_PER_SM, THREADS_PER_SM // (-(-group // 32) * 32))  # whole sub-groups


def groups_report(path: Path) -> str:
    per_item: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for r in _rows(path):
        a = r["args"]
        per_item[a["lsize_0"] * a.get("lsize_1", 1)].append((a["nel"], r["time_ms"] / a["nel"]))
    base = {nel: t for nel, t in per_item.get(256, [])}
    lines = ["| group | resident per SM | ms per work-item / 256's (median over nel) |",
             "|---:|---:|---:|"]  # fmt: skip
    for group in sorted(per_item):
        ratios = [t / base[nel] for nel, t in per_item[group] if nel in base]
        cell = f"{statistics.median(ratios):.2f}" if ratios else "-"
        lines.append(f"| {group} | {resident(group)} | {cell} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path, help="gpu_run.sh's OUT folder")
    args = parser.parse_args()
    found = False
    for name, report in (("collect-hoist.json", hoist_report),
                         ("collect-groups.json", groups_report)):  # fmt: skip
        if (args.out / name).is_file():
            found = True
            print(f"## {name}\n\n{report(args.out / name)}\n")
    if not found:
        parser.error(f"{args.out} has neither collect-hoist.json nor collect-groups.json")


if __name__ == "__main__":
    main()
