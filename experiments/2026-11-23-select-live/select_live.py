"""A deployed selector checked on the device itself, on problems it was not fitted on.

    python experiments/2026-11-23-select-live/select_live.py fit --out DIR [--data TABLE] [--kernels 8] [--seed 0]
    python3 experiments/2026-11-23-select-live/select_live.py measure --bundle DIR --device ID --out LIVE.json \\
        [--repeats 5] [--limit N]                           # on the device's machine
    python experiments/2026-11-23-select-live/select_live.py report --bundle DIR --live LIVE.json [--json]

``fit`` splits the table's problems as ``perfport select evaluate`` does (seeded, 80/20), fits
the default pipeline (``perfport.select.fit_bundle``) on the training problems alone, and
writes the bundle to DIR with the held-out rows and the table's path in ``DIR/heldout.json``
(``measure`` and ``report`` read the table from there).

``measure`` runs each held-out problem through a ``Dispatcher`` on the device and checks its
output against numpy (the reference of the kernel spec), then times every shipped
configuration on it (one warm-up and ``--repeats`` timed launches, the median). So it measures
the whole deployed path, not the table.

``report`` checks that LIVE holds this bundle's configurations and picks, measured on the
table's device, then compares, per held-out problem, the selector's pick with the fastest
shipped configuration measured now (live), and with the table: the geometric mean of t_best / t_pick
within the shipped set, live and in the table, how often the live and the table's fastest
shipped configuration agree, and the table's fraction of the optimum over all configurations.
A pick that failed live (or a problem where nothing ran) is counted in ``picks_failed`` and
left out of the live fraction. Default data: the shipped H100 NVIDIA OpenCL GEMM table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from perfport.kernels import builtin
from perfport.select import PerfTable, fit_bundle, load_bundle, load_csv, split_problems

SHIPPED = ("datasets", "lawson-gemm", "h100-nvidia-opencl.csv.gz")


def _table(path: str | None) -> PerfTable:
    if path:
        return load_csv(path)
    with resources.as_file(resources.files("perfport").joinpath(*SHIPPED)) as shipped:
        return load_csv(shipped)


def _problem(table: PerfTable, row: int) -> dict[str, Any]:
    """A table row as the kernel's problem values, typed as its defaults (flags as bools)."""
    defaults = builtin(table.kernel).problem.merged({})
    out = {}
    for name, value in zip(table.problem_names, table.problems[row].tolist(), strict=True):
        kind = type(defaults[name])
        if kind in (int, bool) and (value != int(value) or (kind is bool and value not in (0, 1))):
            raise SystemExit(f"row {row}: {name} = {value} is not a {kind.__name__}")
        out[name] = kind(value)
    return out


def _heldout(bundle: str) -> dict[str, Any]:
    return json.loads((Path(bundle) / "heldout.json").read_text())


def fit(args: argparse.Namespace) -> int:
    table = _table(args.data)
    train, test = split_problems(table, 0.2, args.seed)
    bundle = fit_bundle(table.subset(train), args.kernels, args.out, seed=args.seed)
    record = {"seed": args.seed, "data": args.data, "rows": [int(r) for r in test]}
    (Path(args.out) / "heldout.json").write_text(json.dumps(record) + "\n")
    print(json.dumps({"bundle": str(args.out), "train": len(train), "heldout": len(test),
                      "configs": len(bundle.configs)}))  # fmt: skip
    return 0


def measure(args: argparse.Namespace) -> int:
    from perfport._core import Config
    from perfport.devices import get_device, open_session
    from perfport.measure import RunSettings, Timing, TrialEngine
    from perfport.select import Dispatcher
    from perfport.tune.tune import resolve_problem

    heldout = _heldout(args.bundle)
    table = _table(heldout["data"])
    bundle = load_bundle(args.bundle)
    rows = heldout["rows"][: args.limit]
    spec = builtin(table.kernel)
    device = get_device(args.device, spec.language)
    settings = RunSettings(verify=False, timing=Timing.fixed(args.repeats, warmup=1))
    rng = np.random.default_rng(0)
    started = time.monotonic()
    out: list[dict[str, Any]] = []
    with Dispatcher(args.bundle, device=device) as dispatcher:
        for row in rows:
            problem = _problem(table, row)
            full = spec.problem.merged(problem)
            m, n, k, b = (int(full[x]) for x in ("M", "N", "K", "batch"))
            inputs = {"lhs": rng.random(b * m * k, dtype=np.float32),
                      "rhs": rng.random(b * k * n, dtype=np.float32)}  # fmt: skip
            got = dispatcher.run(problem, inputs)["out"]
            expected = spec.reference(full, inputs)["out"]
            out.append({"row": row, "pick": bundle.choose(problem),
                        "correct": bool(np.allclose(got, expected, rtol=1e-4, atol=1e-4))})  # fmt: skip
    session = open_session(device)
    builds: dict[Any, Any] = {}
    try:
        for record in out:
            problem = resolve_problem(spec, _problem(table, record["row"]))
            engine = TrialEngine(session, spec, problem, settings, builds)
            times = []
            for config in bundle.configs:
                result = engine.run(Config.of(dict(config)), verify=False)
                times.append(float(np.median(result.times_ms)) if result.ok else None)
            record["live_ms"] = times
    finally:
        session.close()
    Path(args.out).write_text(json.dumps({"device": device.name, "device_id": args.device,
                                          "data": heldout["data"], "repeats": args.repeats,
                                          "configs": [dict(c) for c in bundle.configs],
                                          "seconds": round(time.monotonic() - started, 1),
                                          "problems": out}, indent=1) + "\n")  # fmt: skip
    print(json.dumps({"device": device.name, "problems": len(out),
                      "correct": sum(r["correct"] for r in out)}))  # fmt: skip
    return 0


def report(args: argparse.Namespace) -> int:
    heldout = _heldout(args.bundle)
    table = _table(heldout["data"])
    bundle = load_bundle(args.bundle)
    live = json.loads(Path(args.live).read_text())
    if live["device"] != table.device:
        raise SystemExit(f"{args.live} was measured on {live['device']}, the table on "
                         f"{table.device}; compare a device with its own table")  # fmt: skip
    if (
        live.get("configs") != [dict(c) for c in bundle.configs]
        or live.get("data") != heldout["data"]
    ):
        raise SystemExit(
            f"{args.live} was not measured with the bundle {args.bundle} and its table"
        )
    shipped = [table.config_index(dict(c)) for c in bundle.configs]
    within_live, within_table, of_optimum, agree, failed, compared = [], [], [], 0, 0, 0
    for record in live["problems"]:
        row, pick = record["row"], record["pick"]
        if pick != bundle.choose(_problem(table, row)):
            raise SystemExit(f"{args.live}: row {row} was dispatched to another configuration")
        t_live = np.array([np.nan if t is None else t for t in record["live_ms"]], dtype=float)
        t_table = table.times[row, shipped]
        within_table.append(np.nanmin(t_table) / t_table[pick])
        of_optimum.append(np.nanmin(table.times[row]) / t_table[pick])
        if not np.isfinite(t_live[pick]):
            failed += 1
        elif np.isfinite(t_live).any():
            within_live.append(np.nanmin(t_live) / t_live[pick])
            compared += 1
            agree += int(np.nanargmin(t_live) == np.nanargmin(t_table))
    n = len(live["problems"])
    summary = {
        "device": live["device"],
        "problems": n,
        "outputs_correct": sum(r["correct"] for r in live["problems"]),
        "picks_failed": failed,
        "pick_vs_best_shipped_live": _geomean(within_live),
        "pick_vs_best_shipped_table": _geomean(within_table),
        "fastest_shipped_agrees": agree / max(compared, 1),
        "pick_vs_optimum_table": _geomean(of_optimum),
    }
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        for key, value in summary.items():
            print(f"{key:30s} {value:.3f}" if isinstance(value, float) else f"{key:30s} {value}")
    return 0


def _geomean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fit")
    p.add_argument("--out", required=True)
    p.add_argument("--data")
    p.add_argument("--kernels", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("measure")
    p.add_argument("--bundle", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--limit", type=int, help="measure only the first N held-out problems")
    p = sub.add_parser("report")
    p.add_argument("--bundle", required=True)
    p.add_argument("--live", required=True)
    p.add_argument("--json", action="store_true")
    args = parser.parse_args()
    return {"fit": fit, "measure": measure, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
