"""The paper's section 8.1 test on the shipped PoCL measurements: does a kernel take as long
as its parts, measured apart?

    python experiments/2026-11-26-model-pocl-accuracy/overlap_test.py [--data CSV] [--json OUT]

For every application variant and size with work-removal kernels in the data (``wr_<app>``,
``keep`` one input's loads), prints the full kernel's time, each work-removed kernel's time,
their sum and their largest, and the ratios to the full time. A sum well above the full
time says the parts overlap; a single work-removed kernel slower than the full kernel says
the work-removed kernel is no measurement of that pattern's cost in the full kernel (the
per-pattern model calibrates each pattern's cost on exactly these kernels).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from perfport.model.dataset import read_data

DATA = Path("src/perfport/datasets/model/pocl-paper.csv")


def overlap_rows(path: Path) -> list[dict]:
    runs = read_data(path)
    full = {(r.kernel.removeprefix("app-"), _size(r.problem)): r.time_ms
            for r in runs if r.is_application}  # fmt: skip
    parts: dict[tuple[str, tuple], dict[str, float]] = defaultdict(dict)
    for r in runs:
        if r.kernel.startswith("mk-wr_") and r.problem["keep"] != "all":
            app = r.kernel.removeprefix("mk-wr_").replace("_", "-")
            sizes = tuple((k, v) for k, v in sorted(r.problem.items()) if k != "keep")
            parts[app, sizes][str(r.problem["keep"])] = r.time_ms
    rows = []
    for (app, sizes), kept in sorted(parts.items()):
        if (app, sizes) not in full:
            continue
        total = full[app, sizes]
        rows.append({
            "variant": app, "sizes": dict(sizes), "full_ms": total, "work_removed_ms": kept,
            "sum_ms": sum(kept.values()), "max_ms": max(kept.values()),
            "sum_over_full": sum(kept.values()) / total,
            "max_over_full": max(kept.values()) / total,
        })  # fmt: skip
    return rows


def _size(problem) -> tuple:
    return tuple(sorted(problem.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = overlap_rows(args.data)
    print(
        "| variant | size | full ms | work-removed ms (kept input) | sum / full | largest / full |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        kept = ", ".join(f"{v:.3g} ({k})" for k, v in r["work_removed_ms"].items())
        size = ", ".join(f"{k} = {v}" for k, v in r["sizes"].items())
        print(f"| {r['variant']} | {size} | {r['full_ms']:.3g} | {kept} | "
              f"{r['sum_over_full']:.2f} | {r['max_over_full']:.2f} |")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"data": str(args.data), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
