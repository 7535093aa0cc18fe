"""The CPUs' noise ceiling (issue 31), beside the predictors' scores. Under a second.

    python experiments/2026-11-26-wg-cpu/wg_ceiling.py [--json]

For every CPU collection in interleaved rounds (``data/wg/rounds/*pocl*.samples.npz``) it
times the oracle of each group of n rounds (n = 1, 2, 4 ...) on every other disjoint group of
n rounds of the same scenario (``perfport.wg.ceiling``): n = 1 is one round's fastest size
timed in another round. For the 16-core Xeon, measured in two sessions with the same 8-round
protocol as the shipped dataset, it also times each session's oracle (the median of its 8
rounds) in the other session, scenario by scenario: the ceiling of the dataset's own
protocol. Beside them, the predictors' scores on the same CPU set-ups from ``eval.json``
(``wg_cpu_eval.py``), ``features.json`` (``wg_cpu_features.py``) and ``epyc.json``
(``wg_epyc.py``), read, not recomputed.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from perfport.wg import common_columns, load_dataset, match_scenarios
from perfport.wg.ceiling import ceilings, transfer

HERE = Path(__file__).resolve().parent
ROUNDS = HERE.parents[1] / "data" / "wg" / "rounds"
REPEAT = HERE.parents[1] / "data" / "wg" / "repeat"
SHIPPED = HERE.parents[1] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"
# The 16-core Xeon's second session, same protocol (data/PROVENANCE.md, wg/repeat/).
SECOND = ("xeon16-pocl-8rounds-again.npz", "xeon16-pocl-compact-8rounds-again.npz")


def sessions() -> dict[str, Any]:
    """The shipped dataset's 16-core Xeon scenarios against their second session, matched as
    ``perfport.wg.match_scenarios`` matches (labels, then feature vectors)."""
    first = load_dataset(SHIPPED)
    a_rows, b_rows, corr = [], [], []
    for name in SECOND:
        second = load_dataset(REPEAT / name)
        cols_a, cols_b = common_columns(first.sizes, second.sizes)
        pairs, unmatched = match_scenarios(first, second)
        if unmatched:
            raise SystemExit(f"{name}: rows {unmatched} match no shipped scenario")
        for i, j in pairs:
            a, b = first.runtimes[i, cols_a], second.runtimes[j, cols_b]
            ran = np.isfinite(a) & np.isfinite(b)
            corr.append(float(np.corrcoef(np.log(a[ran]), np.log(b[ran]))[0, 1]))
            a_rows.append(a)
            b_rows.append(b)
    both = transfer(np.array(a_rows), np.array(b_rows))
    return {"ceiling": asdict(both), "median_corr_log_t": float(np.median(corr)),
            "min_corr_log_t": float(np.min(corr))}  # fmt: skip


def predictors() -> dict[str, Any]:
    """The CPU scores already measured, per set-up, for the default and the other methods."""
    out: dict[str, Any] = {}
    evaluated = HERE / "eval.json"
    for r in json.loads(evaluated.read_text())["results"]:
        for method, v in r.items():
            if isinstance(v, dict) and "per_device" in v:
                out.setdefault(f"eval.json:{r['partition']}", {})[method] = v["per_device"]
    features = HERE / "features.json"  # default model, shipped against portable features
    for r in json.loads(features.read_text())["results"] if features.exists() else []:
        if "per_device" in r:
            out[f"features.json:{r['partition']}"] = {
                f"{r_name} features": {d: v[r_name] for d, v in r["per_device"].items()}
                for r_name in ("shipped", "portable")
            }
    epyc = json.loads((HERE / "epyc.json").read_text())
    out["epyc.json"] = {m: {k: epyc[k][m]["performance"] for k in ("seen", "unseen")}
                        for m in epyc["seen"]}  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rounds = {}
    for path in sorted(ROUNDS.glob("*pocl*.samples.npz")):
        with np.load(path, allow_pickle=False) as z:
            samples = z["samples"].astype(np.float64)
        rounds[path.name.removesuffix(".samples.npz")] = [asdict(c) for c in ceilings(samples)]
    report = {"rounds": rounds, "sessions": sessions(), "predictors": predictors()}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print("one group's oracle timed on another group of as many rounds (geomean, worst):")
    for name, rows in rounds.items():
        cells = "  ".join(f"{c['rounds']}r {c['ceiling']:.1%} ({c['worst']:.0%})" for c in rows)
        print(f"  {name:42s} {cells}")
    s = report["sessions"]
    print(f"8-round oracle of one Xeon session timed in the other: {s['ceiling']['ceiling']:.1%} "
          f"over {s['ceiling']['scenarios']} scenarios (worst {s['ceiling']['worst']:.0%}, "
          f"median corr {s['median_corr_log_t']:.2f})")  # fmt: skip
    for split, methods in report["predictors"].items():
        print(f"{split}:")
        for method, per in methods.items():
            print(f"  {method:32s} " + ", ".join(f"{d[:22]} {v:.1%}" for d, v in per.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
