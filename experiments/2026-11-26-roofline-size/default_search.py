"""Does a cold default search of stencil_wide's space at 4096x4096 reach access=vector?

The default strategy is ``prior``; cold (no other device's results) it is exactly
``bayes_rf``, whose first 8 asks are a maximin spread that never looks at a time, so which
configurations they are does not depend on the device's times. After that the asks follow
the times; with no GPU here, a synthetic time (a memory-bound model: 16-byte vector access,
direct loads and full warps fastest) stands in for them, to count how many evaluations the
forest takes to reach a configuration of the kind the focus list found best on the H200
(``access=vector vw=4 variant=direct``). Run: ``python default_search.py [--seeds N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from typing import Any

from perfport import builtin
from perfport._core import Problem
from perfport.devices import get_device
from perfport.space import Space, kernel_space
from perfport.strategies import make_strategy, strategy_class


def synthetic_ms(c: dict[str, Any]) -> float:
    """A plausible memory-bound time in ms (never measured: it only steers the forest)."""
    threads = c["wc"] * c["wr"]
    eff = 1.0 if 128 <= threads <= 512 else 0.6 if 32 <= threads <= 1024 else 0.2
    eff *= 1.0 if c["wc"] % 32 == 0 or c["wc"] * c["vw"] >= 32 else 0.5
    eff *= {"vector": 1.0, "scalar": 0.8}[c["access"]] if c["vw"] > 1 else 0.8
    eff *= 1.0 if c["vw"] == 4 else 0.85
    eff *= 1.0 if c["variant"] == "direct" else 0.75
    eff *= {1: 0.9, 2: 1.0, 4: 0.95, 8: 0.8}[c["rows"]]
    return 0.0390 / eff


def first(space: Space, seed: int, budget: int) -> dict[str, int | None]:
    """Evaluations (1-based) until the search first asks each kind of configuration."""
    strategy = make_strategy(strategy_class("prior"), space, seed, None)
    out: dict[str, int | None] = {"vector": None, "vector_vw4_direct": None, "within_5pct": None}
    best = min(synthetic_ms(space.config(i)) for i in range(len(space)))
    for n in range(1, budget + 1):
        i = strategy.ask()
        if i is None:
            break
        c = space.config(i)
        if c["access"] == "vector" and out["vector"] is None:
            out["vector"] = n
        if c["access"] == "vector" and c["vw"] == 4 and c["variant"] == "direct":
            out["vector_vw4_direct"] = out["vector_vw4_direct"] or n
        if synthetic_ms(c) <= 1.05 * best:
            out["within_5pct"] = n
            break
        strategy.tell(i, synthetic_ms(c))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=200)
    args = parser.parse_args()
    cpu = get_device(None)
    gpu_like = dataclasses.replace(cpu, max_work_group_size=1024, max_work_item_sizes=(1024,) * 3)
    problem = Problem.of(width=4096, height=4096)
    report = {}
    for label, device in (("pocl", cpu), ("max_wg_1024", gpu_like)):
        space = kernel_space(builtin("stencil_wide"), problem, device)
        runs = [first(space, seed, args.budget) for seed in range(args.seeds)]
        vector = sum(space.config(i)["access"] == "vector" for i in range(len(space)))
        report[label] = {"legal": len(space), "vector": vector, "runs": runs}
        for key in ("vector", "vector_vw4_direct", "within_5pct"):
            got = sorted(r[key] for r in runs if r[key] is not None)
            mid = got[len(got) // 2] if got else math.nan
            print(
                f"{label}: {len(space)} legal, {vector} vector; first {key}: median {mid} "
                f"of {len(got)}/{len(runs)} seeds reaching it in {args.budget} ({got})"
            )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
