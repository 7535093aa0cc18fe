"""gpu_run.sh's outputs, one line per device: the best march and the best direct configuration
measured (the ordered list and the default search together), the re-timed best's fraction of
a copy of the same bytes (perfport's roofline copy, and a CuPy copy where timed) at both sizes,
and whether the default search measured march configurations and ended on one.

    python summary.py DIR                  # DIR: $OUT/stencil-march
    python summary.py DIR --pick TAG       # writes DIR/best-TAG.json for compare.py

``--pick`` chooses the faster best of ``ordered-TAG.json`` and ``tune-TAG.json`` and writes it
in the shape compare.py reads (a tuning report's ``best``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from perfport.store import Store


def load(path: Path) -> dict[str, Any]:
    try:
        out: dict[str, Any] = json.loads(path.read_text())
        return out
    except (OSError, json.JSONDecodeError):
        return {}


def pick(folder: Path, tag: str) -> int:
    reports = [load(folder / f"{step}-{tag}.json") for step in ("ordered", "tune")]
    timed = [r for r in reports if (r.get("best") or {}).get("time_ms") is not None]
    if not timed:
        print(f"{folder}: no best configuration for {tag}", file=sys.stderr)
        return 2
    best = min(timed, key=lambda r: r["best"]["time_ms"])
    keys = ("best", "measured", "strategy", "roofline", "roofline_same_bytes")
    (folder / f"best-{tag}.json").write_text(json.dumps({k: best.get(k) for k in keys}))
    return 0


def measured(db: Path, report: dict[str, Any]) -> list[tuple[dict[str, Any], float]]:
    """(config, median ms) of every verified result of the report's campaign."""
    if not db.exists() or "campaign" not in report:
        return []
    with Store(db) as store:
        rows = store.measurements(store.campaign(report["campaign"]))
    return [(dict(m.config), m.time_ms) for m in rows if m.ok and m.time_ms is not None]


def described(c: dict[str, Any]) -> str:
    if not c:
        return "none"
    return f"{c['variant']} {c['access']} vw={c['vw']} rows={c['rows']} {c['wc']}x{c['wr']}"


def fastest(rows: list[tuple[dict[str, Any], float]], variant: str) -> str:
    mine = [r for r in rows if r[0]["variant"] == variant]
    if not mine:
        return f"{variant} none"
    c, ms = min(mine, key=lambda r: r[1])
    return f"{variant} {ms:.5f} ms ({described(c)})"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def line(folder: Path, tag: str) -> str:
    ordered, tune = load(folder / f"ordered-{tag}.json"), load(folder / f"tune-{tag}.json")
    order_rows = measured(folder / f"ordered-{tag}.db", ordered)
    tune_rows = measured(folder / f"tune-{tag}.db", tune)
    rows = order_rows + tune_rows
    compare = load(folder / f"compare-{tag}.json")
    here, big = compare.get("at_problem") or {}, compare.get("at_big") or {}
    cupy = (compare.get("cupy_copy") or {}).get("fraction_of_cupy_copy")
    ms = here.get("time_ms")
    config = compare.get("config") or {}
    marches = sum(c["variant"] == "march" for c, _ in tune_rows)
    tune_best = (tune.get("best") or {}).get("config") or {}
    return (
        f"{tag}: {fastest(rows, 'march')} | {fastest(rows, 'direct')} | best re-timed "
        f"{config.get('variant', '-')} {'-' if ms is None else f'{ms:.5f}'} ms: "
        f"{percent(here.get('fraction_of_copy_same_bytes'))} of a copy of the same bytes, "
        f"{percent(cupy)} of a CuPy copy; at {big.get('problem', {}).get('width', '-')}^2 "
        f"{percent(big.get('fraction_of_copy_same_bytes'))} | ordered list {len(order_rows)} "
        f"measured | default search {len(tune_rows)} measured, {marches} march, best "
        f"{described(tune_best)}: "
        f"{'found march' if tune_best.get('variant') == 'march' else 'no march best'}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--pick", metavar="TAG", help="write best-TAG.json and stop")
    args = p.parse_args(argv)
    if args.pick:
        return pick(args.folder, args.pick)
    tags = sorted(
        p.name[len("ordered-") : -len(".json")] for p in args.folder.glob("ordered-*.json")
    )
    for tag in tags:
        print(line(args.folder, tag))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
