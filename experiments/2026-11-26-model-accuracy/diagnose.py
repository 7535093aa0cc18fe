"""Why the per-access-pattern model under-predicts the prefetching variants, from the
calibration set only (issue 24): the application times are the test set and are not read.

    python experiments/2026-11-26-model-accuracy/diagnose.py [--data CSV] [--model JSON] [--json OUT]

1. Leave-one-family-out cross-validation on the calibration set: for each measurement-kernel
   family (``mk-<generator>``), calibrate on the others and predict it; costs that only the
   held-out family informs are pinned, and its kernels that depend on them are counted as
   not predictable. Done with the unconstrained (LM) and the bounded (non-negative) fit.
2. Coverage: for each application variant (its counts, not its time) the on-chip features
   the model prices with one cost each (local accesses, barriers), split the way the
   hardware sees them: local loads by lid(0) stride (1: consecutive banks, 0: broadcast,
   other: conflicts), local stores, barriers per work-group, global loads per barrier, and
   the local memory a work-group holds; and the same for every calibration family, so a
   feature the application has and no calibration kernel has shows up.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

from perfport.model import Model, calibrate, predict
from perfport.model.dataset import KernelFeatures, read_data
from perfport.model.errors import ModelError

DATA = Path("experiments/2026-11-26-gpu-session-b/call1/model/data.csv")
MODEL = Path("src/perfport/datasets/model/paper-linear.json")


def _geomean(values: list[float]) -> float:
    values = [max(v, 1e-9) for v in values]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def cross_validation(
    model: Model, rows: list[Any], nonnegative: bool, one: bool = False
) -> dict[str, Any]:
    """Per calibration family, the geometric-mean relative error of its kernels predicted
    by a calibration without them: the whole family left out, or (``one``) one kernel at a
    time. Costs only the left-out kernels inform are pinned; kernels that need them are
    counted as not predictable."""
    out: dict[str, Any] = {}
    for held in sorted({r.kernel for r in rows}):
        folds = (
            [[i] for i, r in enumerate(rows) if r.kernel == held]
            if one
            else [[i for i, r in enumerate(rows) if r.kernel == held]]
        )
        errors, refused, pinned = [], 0, set()
        for fold in folds:
            train = [r for j, r in enumerate(rows) if j not in fold]
            c = calibrate(model, train, allow_uninformed=True, nonnegative=nonnegative)
            pinned |= set(c.uninformed)
            for j in fold:
                try:
                    value = predict(c, rows[j].features).value
                except ModelError:
                    refused += 1
                    continue
                errors.append(abs(value - rows[j].output) / rows[j].output)
        out[held] = {"n": len(errors) + refused, "geomean_rel_error": _geomean(errors),
                     "not_predictable": refused, "pinned": sorted(pinned)}  # fmt: skip
    return out


def coverage(features: KernelFeatures, kernel: str, problem: Any) -> dict[str, Any]:
    """The on-chip features of one kernel, per work-item (loopy counts per sub-group where
    a whole sub-group reads one element: those are spread over the sub-group's items)."""
    stats = features.stats(kernel, problem)
    items = max(stats.thread_groups * stats.work_group_size, 1.0)
    sub = stats.stats.subgroup_size

    def per_item(m: Any) -> float:
        scale = sub if m.pattern.granularity.value == "subgroup" else 1.0
        return m.count * scale / items

    local: dict[str, float] = defaultdict(float)
    gloads = 0.0
    for m in stats.mem:
        if m.pattern.mtype == "local":
            key = m.pattern.direction
            if key == "load":
                key += f"_lid0_stride_{int(m.lstrides.get(0, 0))}"
            local[key] += per_item(m)
        elif m.pattern.direction == "load":
            gloads += per_item(m)
    barriers = sum(v for k, v in stats.sync if k.value == "barrier_local")  # per work-item
    return {"local_per_item": dict(local), "barriers_per_item": barriers,
            "global_loads_per_item": gloads, "work_groups": stats.thread_groups,
            "barriers_times_groups": barriers * stats.thread_groups}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    runs = read_data(args.data)
    model = Model.load(args.model)
    features = KernelFeatures()
    train = [r for r in runs if r.is_collection]
    rows = features.measurements(model, train)
    report: dict[str, Any] = {"data": str(args.data), "model": str(args.model)}
    for bounded in (False, True):
        c = calibrate(model, rows, allow_uninformed=True, nonnegative=bounded)
        fit: dict[str, list[float]] = defaultdict(list)
        for r, res in zip(rows, c.residuals, strict=True):
            fit[r.kernel].append(abs(res))  # scaled residual = relative error
        key = "bounded" if bounded else "lm"
        report[key] = {
            "fit_rel_error": {k: _geomean(v) for k, v in sorted(fit.items())},
            "leave_family_out": cross_validation(model, rows, bounded),
            "leave_one_out": cross_validation(model, rows, bounded, one=True),
            "parameters": dict(c.parameters),
        }
    report["coverage"] = {}
    for r in runs:
        key = f"{r.kernel} {dict(r.problem)}"  # counts only: no application time is read
        if r.is_application or r.kernel in ("mk-lmem_pattern", "mk-barrier_pattern"):
            report["coverage"][key] = coverage(features, r.kernel, r.problem)
    text = json.dumps(report, indent=1, default=float)
    if args.json:
        args.json.write_text(text + "\n")
    _print(report)


def _pct(cv: dict[str, Any]) -> str:
    n_p = f" ({cv['not_predictable']} not predictable)" if cv["not_predictable"] else ""
    value = cv["geomean_rel_error"]
    return ("-" if math.isnan(value) else f"{value:.1%}") + n_p


def _print(report: dict[str, Any]) -> None:
    print(
        "| calibration family | n | fit | one kernel left out | family left out | pinned when family left out |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for key in ("lm", "bounded"):
        fit = report[key]
        for fam, cv in fit["leave_family_out"].items():
            loo = fit["leave_one_out"][fam]
            print(f"| {fam} ({key}) | {cv['n']} | {fit['fit_rel_error'][fam]:.1%} | "
                  f"{_pct(loo)} | {_pct(cv)} | {', '.join(cv['pinned'])} |")  # fmt: skip
        every = [v for f in fit["leave_one_out"].values() for v in [f["geomean_rel_error"]] * f["n"]
                 if not math.isnan(v)]  # fmt: skip
        print(f"| all ({key}) | | | {_geomean(every):.1%} (family geomeans, weighted) | | |")
    print()
    print(
        "| kernel | local accesses per work-item | barriers per item | global loads per item | work-groups | barriers x work-groups |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for k, c in report["coverage"].items():
        local = ", ".join(f"{n} {v:.4g}" for n, v in sorted(c["local_per_item"].items()))
        print(f"| {k} | {local} | {c['barriers_per_item']:.4g} | "
              f"{c['global_loads_per_item']:.4g} | {c['work_groups']:.4g} | "
              f"{c['barriers_times_groups']:.4g} |")  # fmt: skip


if __name__ == "__main__":
    main()
