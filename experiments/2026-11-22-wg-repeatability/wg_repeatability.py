"""How reproducible is the oracle of perfport's stencil dataset? A noise ceiling per device.

    .venv/bin/python experiments/2026-11-22-wg-repeatability/wg_repeatability.py [--data STENCILS.npz] [--repeat R.npz ...]
        [--method performance_knn+fixed] [--partition kernel] [--no-method] [--json]

Loads the shipped work-group dataset (``src/perfport/datasets/wg/stencils.npz``) and each
re-measurement (by default every ``.npz`` in ``data/wg/repeat/``: the same
scenarios collected again with the same code, see ``PROVENANCE.md``), matches each re-measured
scenario to the shipped one (device, kernel and dataset labels; where several shipped scenarios
share those, as synthetic ones do, on equal feature vectors too), aligns the work-group sizes
by their (wc, wr) pairs (a re-measurement may list fewer sizes) and compares, per scenario,
over the sizes that ran in both runs:

- the correlation of the log times of the two runs;
- what the first run's best size reaches on the second run (t_best2 / t2[best of run 1]),
  and the other way round: a predictor that knew one run perfectly would score this against
  the other, so its geometric mean over a device's scenarios is that device's noise ceiling;
- the median time ratio t2 / t1 over the sizes (drift between the runs).

Per device it prints the scenarios matched, the median correlation, the geometric mean and
minimum of both directions, and the median of the per-scenario time ratios. Unless
--no-method is given, it also evaluates --method in --partition (leave-one-kernel-out by
default, answered as ``perfport wg evaluate`` answers: propose until a size runs) on the
shipped dataset, and prints per device what the method reaches on all of that device's
scenarios, on the matched ones, with its choices timed in the second run (against the
second run's best), to set next to the ceiling, and against the geometric mean of the two
runs' times: an oracle with less noise in it, so the rise from one run to both shows how much
of the gap to 100% is the oracle's noise rather than the method. No result is hard-coded:
everything is computed from the files.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfport.wg import (
    WgDataset,
    common_columns,
    folds,
    geomean,
    load_dataset,
    make_predictor,
    match_scenarios,
)

ROOT = Path(__file__).parents[2]
SHIPPED = ROOT / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"
REPEATS = ROOT / "data" / "wg" / "repeat"


@dataclass(frozen=True)
class ScenarioRepeat:
    """One scenario measured twice, compared over the sizes that ran in both runs."""

    first: int  # row in the first dataset
    second: int  # row in the second dataset
    sizes: int  # sizes that ran in both
    correlation: float  # of log times across sizes (NaN with fewer than 2 sizes)
    first_best_on_second: float  # t_best(run 2) / t_run2[best size of run 1], in (0, 1]
    second_best_on_first: float  # t_best(run 1) / t_run1[best size of run 2], in (0, 1]
    time_ratio: float  # median over sizes of t_run2 / t_run1


@dataclass(frozen=True)
class DeviceCeiling:
    """A device's scenarios measured twice: how far one run's oracle carries to the other."""

    device: str
    repeat: str  # file name of the re-measurement
    scenarios: int  # matched
    unmatched: int  # re-measured scenarios of this device with no (or no single) match
    correlation_median: float
    first_best_on_second: float  # geometric mean over scenarios
    first_best_on_second_min: float
    second_best_on_first: float
    second_best_on_first_min: float
    time_ratio_median: float


@dataclass(frozen=True)
class MethodOnDevice:
    """What a method reaches on a device, next to the device's ceiling."""

    device: str
    repeat: str  # file name of the re-measurement ("" where none has this device)
    method: str
    partition: str
    scenarios: int  # the device's scenarios in the shipped dataset that were tested
    performance: float  # geometric mean of t_oracle / t_chosen over them
    matched: int  # of those, re-measured
    performance_matched: float  # over the re-measured ones, first run's times
    performance_second_run: float  # its choices timed in the second run, against its best
    performance_both_runs: float  # against the two runs' geometric-mean times: less noise


def compare_runs(first: np.ndarray, second: np.ndarray) -> tuple[int, float, float, float, float]:
    """Two runs' times of one scenario over the same sizes (NaN: did not run).

    Returns (sizes that ran in both, correlation of log times, first's best on second,
    second's best on first, median of second / first); the last four are NaN when no size
    ran in both.
    """
    ran = np.isfinite(first) & np.isfinite(second) & (first > 0) & (second > 0)
    n = int(ran.sum())
    if n == 0:
        return 0, np.nan, np.nan, np.nan, np.nan
    a, b = first[ran], second[ran]
    if n >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0:
        correlation = float(np.corrcoef(np.log(a), np.log(b))[0, 1])
    else:
        correlation = np.nan
    return (n, correlation, float(b.min() / b[np.argmin(a)]), float(a.min() / a[np.argmin(b)]),
            float(np.median(b / a)))  # fmt: skip


def scenario_repeats(first: WgDataset, second: WgDataset) -> tuple[list[ScenarioRepeat], list[int]]:
    """Every matched scenario compared; and the unmatched rows of ``second``."""
    cols_first, cols_second = common_columns(first.sizes, second.sizes)
    pairs, unmatched = match_scenarios(first, second)
    out = []
    for i, j in pairs:
        n, corr, one, two, ratio = compare_runs(
            first.runtimes[i, cols_first], second.runtimes[j, cols_second]
        )
        out.append(ScenarioRepeat(i, j, n, corr, one, two, ratio))
    return out, unmatched


def device_ceilings(first: WgDataset, second: WgDataset, repeat: str) -> list[DeviceCeiling]:
    """Per device of ``second``: the summary of its matched scenarios."""
    rows, unmatched = scenario_repeats(first, second)
    out = []
    for device in sorted({str(d) for d in second.device}):
        mine = [r for r in rows if str(second.device[r.second]) == device and r.sizes > 0]
        one = np.array([r.first_best_on_second for r in mine])
        two = np.array([r.second_best_on_first for r in mine])
        out.append(DeviceCeiling(
            device=device,
            repeat=repeat,
            scenarios=len(mine),
            unmatched=sum(str(second.device[j]) == device for j in unmatched),
            correlation_median=_nanmedian([r.correlation for r in mine]),
            first_best_on_second=geomean(one),
            first_best_on_second_min=float(one.min()) if len(one) else np.nan,
            second_best_on_first=geomean(two),
            second_best_on_first_min=float(two.min()) if len(two) else np.nan,
            time_ratio_median=_nanmedian([r.time_ratio for r in mine]),
        ))  # fmt: skip
    return out


def _nanmedian(values: Sequence[float]) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if len(v) else np.nan


def method_choices(data: WgDataset, method: str, partition: str) -> np.ndarray:
    """(S,) column each scenario gets when held out in ``partition`` (-1: never tested).

    Answered as a launcher would (and as ``perfport.wg.evaluate`` does): propose, and while
    the size did not run, remember it as refused and ask again.
    """
    chosen = np.full(len(data), -1, dtype=np.int64)
    for train, test in folds(data, partition):
        predictor = make_predictor(method).fit(data.subset(train))
        for s in test:
            refused: set[int] = set()
            for _ in range(data.runtimes.shape[1]):
                w = int(predictor.propose(data.features[s], int(data.max_wg[s]), refused))
                if np.isfinite(data.runtimes[s, w]):
                    break
                refused.add(w)
            chosen[s] = w
    return chosen


def method_on_devices(
    data: WgDataset, chosen: np.ndarray, repeats: Sequence[tuple[str, WgDataset]], method: str,
    partition: str,
) -> list[MethodOnDevice]:  # fmt: skip
    """Per device of ``data``: the method's score over all its scenarios and, for each named
    re-measurement with scenarios of that device (one row each; a row with repeat "" where
    none has), on the re-measured scenarios: in the first run, with its choices timed in the
    second (over the sizes that ran in both runs), and against both runs' geometric-mean times."""
    tested = chosen >= 0
    rows = np.flatnonzero(tested)
    score = np.full(len(data), np.nan)
    best = np.nanmin(np.where(data.legal, data.runtimes, np.nan), axis=1)
    score[rows] = best[rows] / data.runtimes[rows, chosen[rows]]
    scored = [(name, *_second_scores(data, chosen, tested, second)) for name, second in repeats]
    out = []
    for device in sorted({str(d) for d in data.device}):
        mine = tested & (data.device == device)
        found = [(name, two, both) for name, two, both in scored if np.isfinite(two[mine]).any()]
        none = np.full(len(data), np.nan)
        for name, two, both in found or [("", none, none)]:
            again = mine & np.isfinite(two)
            out.append(MethodOnDevice(
                device=device, repeat=name, method=method, partition=partition,
                scenarios=int(mine.sum()), performance=geomean(score[mine]),
                matched=int(again.sum()), performance_matched=geomean(score[again]),
                performance_second_run=geomean(two[again]),
                performance_both_runs=geomean(both[again]),
            ))  # fmt: skip
    return out


def _second_scores(
    data: WgDataset, chosen: np.ndarray, tested: np.ndarray, second: WgDataset
) -> tuple[np.ndarray, np.ndarray]:
    """(S,) t_best / t_chosen in the re-measurement, and against both runs' geometric-mean
    times; NaN where the scenario was not re-measured or its choice did not run in both."""
    two, both = np.full(len(data), np.nan), np.full(len(data), np.nan)
    cols_first, cols_second = common_columns(data.sizes, second.sizes)
    where = {int(c): k for k, c in enumerate(cols_first)}
    for i, j in match_scenarios(data, second)[0]:
        if not tested[i] or int(chosen[i]) not in where:
            continue
        a, b = data.runtimes[i, cols_first], second.runtimes[j, cols_second]
        ran = np.isfinite(a) & np.isfinite(b)
        k = where[int(chosen[i])]
        if ran[k]:
            two[i] = b[ran].min() / b[k]
            mean = np.sqrt(a * b)
            both[i] = mean[ran].min() / mean[k]
    return two, both


def render(ceilings: Sequence[DeviceCeiling], methods: Sequence[MethodOnDevice]) -> str:
    lines = ["noise ceiling: one run's best size timed in the other run (geomean, min)",
             f"  {'device':40} {'repeat':32} {'n':>3} {'corr':>6} {'1st on 2nd':>15} "
             f"{'2nd on 1st':>15} {'t2/t1':>6}"]  # fmt: skip
    for c in ceilings:
        lines.append(
            f"  {c.device[:40]:40} {c.repeat[:32]:32} {c.scenarios:3d} {c.correlation_median:6.3f} "
            f"{c.first_best_on_second:7.1%} ({c.first_best_on_second_min:4.0%}) "
            f"{c.second_best_on_first:7.1%} ({c.second_best_on_first_min:4.0%}) "
            f"{c.time_ratio_median:6.3f}" + (f"  ({c.unmatched} unmatched)" if c.unmatched else "")
        )
    if methods:
        m = methods[0]
        lines += ["", f"{m.method}, {m.partition} partition (t_oracle / t_chosen, geomean)",
                  f"  {'device':40} {'n':>4} {'all':>7} {'repeat':32} {'matched':>7} {'on them':>8} "
                  f"{'2nd run':>8} {'both':>7}"]  # fmt: skip
        for m in methods:
            lines.append(
                f"  {m.device[:40]:40} {m.scenarios:4d} {m.performance:7.1%} {m.repeat[:32]:32} "
                f"{m.matched:7d} "
                f"{_percent(m.performance_matched):>8} {_percent(m.performance_second_run):>8} "
                f"{_percent(m.performance_both_runs):>7}"
            )
    return "\n".join(lines)


def _percent(value: float) -> str:
    return f"{value:.1%}" if np.isfinite(value) else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHIPPED, help="the first run (.npz)")
    parser.add_argument("--repeat", type=Path, action="append", default=None,
                        help="a re-measurement (.npz); repeatable (default: data/wg/repeat/*.npz)")  # fmt: skip
    parser.add_argument("--method", default="performance_knn+fixed")
    parser.add_argument("--partition", default="kernel")
    parser.add_argument("--no-method", action="store_true", help="only the ceilings")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    paths = args.repeat or sorted(REPEATS.glob("*.npz"))
    if not paths:
        print(f"no re-measurements given and none in {REPEATS}", file=sys.stderr)
        return 2
    data = load_dataset(args.data)
    repeats = [load_dataset(p) for p in paths]
    ceilings = [
        c for p, r in zip(paths, repeats, strict=True) for c in device_ceilings(data, r, p.name)
    ]
    methods: list[MethodOnDevice] = []
    if not args.no_method:
        chosen = method_choices(data, args.method, args.partition)
        named = [(p.name, r) for p, r in zip(paths, repeats, strict=True)]
        methods = method_on_devices(data, chosen, named, args.method, args.partition)
    if args.json:
        out: dict[str, Any] = {
            "data": str(args.data), "repeats": [str(p) for p in paths],
            "ceilings": [_finite(asdict(c)) for c in ceilings],
            "method": [_finite(asdict(m)) for m in methods],
        }  # fmt: skip
        print(json.dumps(out, indent=1))
    else:
        print(render(ceilings, methods))
    return 0


def _finite(record: dict[str, Any]) -> dict[str, Any]:
    """NaN as null, so the output is strict JSON."""
    return {
        k: None if isinstance(v, float) and not np.isfinite(v) else v for k, v in record.items()
    }


if __name__ == "__main__":
    sys.exit(main())
