"""Two device set-ups, scenario by scenario: do the best work-group sizes carry over?

    python experiments/2026-11-22-wg-repeatability/wg_backends.py [--data STENCILS.npz] [--first LABEL] [--second LABEL] [--json]

Takes the scenarios of two device labels (by default the H100 through NVIDIA OpenCL and
through CUDA; ``--second "NVIDIA H200 (opencl)"`` compares two GPUs; all in the shipped
``src/perfport/datasets/wg/stencils.npz``), pairs the ones with the same kernel and features
apart from the device's (the same scenario), and compares each pair over the sizes that ran
in both as ``wg_repeatability.compare_runs`` compares two runs: the correlation of log
times, what the first set-up's best size reaches on the second (and back), and the median
time ratio second / first. Also: how often the two best sizes are equal, and what the best
single size of each set-up (over all paired scenarios, in hindsight) reaches. No figure is hard-coded.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from perfport.wg import WgDataset, geomean, load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wg_repeatability import SHIPPED, compare_runs  # a sibling script

OPENCL = "NVIDIA H100 80GB HBM3 (opencl)"
CUDA = "NVIDIA H100 80GB HBM3 (cuda)"


def pairs(data: WgDataset, first: str, second: str) -> list[tuple[int, int]]:
    """(row of ``first``, row of ``second``) for each scenario measured on both: the same
    kernel and the same features apart from the device's."""
    rows = np.flatnonzero(data.device == first)
    own = [k for k, name in enumerate(data.feature_names) if not name.startswith("device_")]
    out = []
    for j in np.flatnonzero(data.device == second):
        same = [i for i in rows if data.kernel[i] == data.kernel[j]
                and np.allclose(data.features[i, own], data.features[j, own], equal_nan=True)]  # fmt: skip
        if len(same) == 1:
            out.append((int(same[0]), int(j)))
    return out


def best_fixed(times: np.ndarray) -> tuple[int, np.ndarray]:
    """The column with the best geometric-mean fraction of each row's optimum (all rows ran it),
    and those fractions per row."""
    fraction = np.nanmin(times, axis=1)[:, None] / times
    ran = np.isfinite(fraction).all(axis=0)
    score = np.where(ran, np.exp(np.log(np.where(ran, fraction, 1.0)).mean(axis=0)), -1.0)
    column = int(np.argmax(score))
    return column, fraction[:, column]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHIPPED)
    parser.add_argument("--first", default=OPENCL)
    parser.add_argument("--second", default=CUDA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    data = load_dataset(args.data)
    matched = pairs(data, args.first, args.second)
    if not matched:
        print(
            f"no scenario was measured on both {args.first!r} and {args.second!r}", file=sys.stderr
        )
        return 2
    a = data.runtimes[[i for i, _ in matched]]
    b = data.runtimes[[j for _, j in matched]]
    both = np.isfinite(a) & np.isfinite(b)
    a, b = np.where(both, a, np.nan), np.where(both, b, np.nan)
    rows = [compare_runs(x, y) for x, y in zip(a, b, strict=True)]
    col_a, _ = best_fixed(a)
    col_b, _ = best_fixed(b)
    size = lambda c: [int(v) for v in data.sizes[c]]  # noqa: E731
    report = {
        "first": args.first, "second": args.second, "scenarios": len(matched),
        "corr_log_t_median": float(np.nanmedian([r[1] for r in rows])),
        "first_best_on_second": geomean(np.array([r[2] for r in rows])),
        "second_best_on_first": geomean(np.array([r[3] for r in rows])),
        "same_best_size": float(np.mean(np.nanargmin(a, axis=1) == np.nanargmin(b, axis=1))),
        "time_ratio_median": float(np.nanmedian([r[4] for r in rows])),
        "first_best_fixed": size(col_a),
        "first_best_fixed_on_first": geomean(np.nanmin(a, axis=1) / a[:, col_a]),
        "first_best_fixed_on_second": geomean(np.nanmin(b, axis=1) / b[:, col_a]),
        "second_best_fixed": size(col_b),
        "second_best_fixed_on_second": geomean(np.nanmin(b, axis=1) / b[:, col_b]),
    }  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['scenarios']} scenarios on both {args.first} and {args.second}")
    for key, value in report.items():
        if key not in ("first", "second", "scenarios"):
            print(f"  {key:28} {value:.3f}" if isinstance(value, float) else f"  {key:28} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
