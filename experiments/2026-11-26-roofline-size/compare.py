"""The best configuration of a default-strategy tuning run, re-timed on its own beside a CuPy
copy of the same bytes, and placed against both of the device's ceilings: the large-array
copy ceiling and a copy of the same bytes (the size curve of ``perfport roofline``); then the
same configuration at a larger problem against the large-array ceiling. Used by gpu_run.sh.

    python compare.py --tune-json tune.json --device cuda:0 --db roof.db \\
        --problem width=4096 height=4096 --big width=16384 height=16384 --out compare.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from perfport import builtin
from perfport._core.metrics import ResultMetrics
from perfport.devices import get_device
from perfport.store import Store, stored_ceilings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "2026-11-26-builtins"))
from builtins_compare import cupy_baselines, tune


def sizes(values: list[str]) -> dict[str, int]:
    out = {}
    for text in values:
        key, _, value = text.partition("=")
        out[key] = int(value)
    return out


def placed(
    kernel: str, config: dict[str, Any], problem: dict[str, int], ms: float | None, ceilings: Any
) -> dict[str, Any]:
    """The time's GB/s and its fractions of both ceilings (None where unknown)."""
    scoring = ResultMetrics.of(builtin(kernel).describe(), problem, ceilings)
    values = scoring.values(config, ms)
    return {
        "problem": problem, "time_ms": ms, "GBps": values.get("GBps"),
        "fraction_of_copy_ceiling": values.get("roofline"),
        "fraction_of_copy_same_bytes": values.get("roofline_same_bytes"),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tune-json", type=Path, required=True)
    p.add_argument("--kernel", default="stencil_wide", help="the built-in tuned (a stencil)")
    p.add_argument("--device", required=True)
    p.add_argument("--db", type=Path, required=True, help="the database holding the ceilings")
    p.add_argument("--problem", nargs="+", required=True)
    p.add_argument("--big", nargs="+", required=True)
    p.add_argument("--time", type=float, default=15.0, help="seconds per re-timing")
    p.add_argument("--repeats", type=int, default=50, help="timed launches of the CuPy copy")
    p.add_argument("--vendor-copy", action="store_true", help="time a CuPy copy (GPU only)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    report = json.loads(args.tune_json.read_text())
    config = (report.get("best") or {}).get("config")
    if config is None:
        print(f"{args.tune_json}: the tuning run found no best configuration", file=sys.stderr)
        return 2
    with Store(args.db) as store:
        ceilings = stored_ceilings(store).get(get_device(args.device).fingerprint)
    work = args.out.parent / (args.out.stem + "-work")
    work.mkdir(parents=True, exist_ok=True)
    configs = work / "best.json"
    configs.write_text(json.dumps([config]))
    out: dict[str, Any] = {"device": args.device, "config": config, "tune": {
        k: report.get(k) for k in ("measured", "strategy", "roofline", "roofline_same_bytes")
    }, "ceilings": None if ceilings is None else ceilings.to_json()}  # fmt: skip
    for label, problem in (("at_problem", sizes(args.problem)), ("at_big", sizes(args.big))):
        again = tune(args.kernel, problem, args.device, 1, args.time, work / f"{label}.db", configs)
        out[label] = placed(args.kernel, config, problem, again.best_ms, ceilings) | {
            "error": again.error
        }
    problem = sizes(args.problem)
    copy = cupy_baselines("stencil", problem, args.repeats) if args.vendor_copy else {}
    ms = out["at_problem"]["time_ms"]
    if copy.get("copy_ms") and ms:
        copy["fraction_of_cupy_copy"] = copy["copy_ms"] / ms
    out["cupy_copy"] = copy or {"skipped": "not a GPU run (--vendor-copy not given)"}
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
