"""Issue 27's goals, cache by cache, from a summary written by benchmarks/strategies.py --json:
    python experiments/2026-11-27-heldout-caches/goals.py experiments/2026-11-27-heldout-caches/summary-heldout.json
Cold is ``perfport:bayes_sweep`` (what the default runs as with nothing else in the store), with
relatives ``perfport:prior``; Kernel Tuner's best is the lowest median of its strategies on
that cache (unreached, None, counts as 201)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

TOP = 201.0


def median(row: dict[str, float | None], cache: str) -> float:
    value = row.get(cache)
    return TOP if value is None else float(value)


def main() -> None:
    summary = json.loads(Path(sys.argv[1]).read_text())
    to95 = {name: row["evals_to_95"] for name, row in summary.items() if "evals_to_95" in row}
    kt = [name for name in to95 if name.startswith("kernel_tuner:")]
    caches = list(to95["perfport:prior"])
    print(
        f"{'cache':28} {'cold':>6} {'relatives':>9} {'KT best':>8} {'which':18} cold<=0.5x rel<=0.3x"
    )
    held = {"cold": 0, "relatives": 0}
    applicable = 0
    for cache in caches:
        best_name = min(kt, key=lambda n: median(to95[n], cache))
        best = median(to95[best_name], cache)
        cold = median(to95["perfport:bayes_sweep"], cache)
        rel = median(to95["perfport:prior"], cache)
        if best < TOP:
            applicable += 1
            held["cold"] += cold <= 0.5 * best
            held["relatives"] += rel <= 0.3 * best
        marks = (
            ("yes" if cold <= 0.5 * best else "no", "yes" if rel <= 0.3 * best else "no")
            if best < TOP else ("n/a", "n/a")
        )  # fmt: skip
        show = lambda v: ">200" if v >= TOP else f"{v:g}"  # noqa: E731
        print(f"{cache:28} {show(cold):>6} {show(rel):>9} {show(best):>8} {best_name[13:]:18} "
              f"{marks[0]:>10} {marks[1]:>9}")  # fmt: skip
    print(
        f"Kernel Tuner reaches 95% within 200 on {applicable} caches: cold at most 0.5x its best "
        f"on {held['cold']}, with relatives at most 0.3x on {held['relatives']}"
    )


if __name__ == "__main__":
    main()
