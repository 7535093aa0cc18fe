"""Does PoCL's CPU timing reproduce at larger stencil sizes? Two back-to-back sweeps compared.

    python experiments/2026-11-22-wg-repeatability/wg_sweep_repeatability.py [--json]

Data: data/wg/repeat/xeon16-pocl-sweep-KERNEL-run{1,2}.csv.gz, the heat, gol
and sobel stencils at 512^2 to 4096^2 over all 229 work-group sizes, swept twice in a row on
the GPU machine's 16-core Xeon through PoCL (provenance: data/PROVENANCE.md).
Per kernel and size it prints the correlation of log times between the runs, the fraction of
each run's optimum that the other run's best size reaches (the oracle's noise ceiling), the
best time and how far the median size is from it (the signal a predictor has to find).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from perfport.select import load_csv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wg_repeatability import compare_runs  # a sibling script

REPEAT = Path(__file__).resolve().parents[2] / "data" / "wg" / "repeat"
KERNELS = ("heat", "gol", "sobel")


def compare(first: np.ndarray, second: np.ndarray) -> dict[str, float]:
    """Two runs' times of the same sizes (``wg_repeatability.compare_runs``), plus the first
    run's best time and how far its median size is from it."""
    sizes, corr, one, two, _ = compare_runs(first, second)
    ran = np.isfinite(first) & np.isfinite(second)
    return {
        "sizes": sizes,
        "corr_log_t": corr,
        "first_best_on_second": one,
        "second_best_on_first": two,
        "best_ms": float(first[ran].min()),
        "median_over_best": float(np.median(first[ran]) / first[ran].min()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    rows = []
    for kernel in KERNELS:
        one = load_csv(REPEAT / f"xeon16-pocl-sweep-{kernel}-run1.csv.gz")
        two = load_csv(REPEAT / f"xeon16-pocl-sweep-{kernel}-run2.csv.gz")
        if one.configs != two.configs:
            raise SystemExit(f"{kernel}: the two runs list different work-group sizes")
        where = {tuple(p): i for i, p in enumerate(two.problems)}
        for i, problem in enumerate(one.problems):
            j = where[tuple(problem)]
            size = int(one.problem_dict(i)["width"])
            rows.append({"kernel": kernel, "size": size} | compare(one.times[i], two.times[j]))
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
        return
    print(f"{'kernel':7}{'size':>6}{'corr':>7}{'1st on 2nd':>12}{'2nd on 1st':>12}"
          f"{'best ms':>9}{'median/best':>13}")  # fmt: skip
    for r in rows:
        print(f"{r['kernel']:7}{r['size']:6d}{r['corr_log_t']:7.3f}{r['first_best_on_second']:12.3f}"
              f"{r['second_best_on_first']:12.3f}{r['best_ms']:9.3f}{r['median_over_best']:13.2f}")  # fmt: skip
    ceiling = np.array([[r["first_best_on_second"], r["second_best_on_first"]] for r in rows])
    print(f"\ngeometric mean ceiling over {len(rows)} (kernel, size) pairs, both directions: "
          f"{float(np.exp(np.log(ceiling).mean())):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
