"""Work-group prediction on CPUs scored on held-out rounds (issue 31): the winner's curse.

    python experiments/2026-11-26-wg-cpu/wg_heldout.py [--json]     # about a minute

The default model answers each 16-core Xeon scenario of the shipped dataset with the scenario's
kernel left out of training (``perfport wg evaluate --partitions kernel``). Its choices, the
table's oracle and w(32x4) are scored on the rounds behind the table
(``data/wg/rounds/xeon16-pocl{,-compact}-8x1.samples.npz``, 101 scenarios, 8 rounds) both ways
(``perfport.wg.heldout``): the same-table score (t_min / t_chosen on every round's medians) and
the held-out score (the fastest size of 4 rounds and the choice both timed on the other 4,
both ways), for the two ways of splitting the rounds. Then the same choices on the second
session's rounds (2026-11-24, 70 of the scenarios, never used for training or for the table),
matched through its datasets in ``data/wg/repeat``. Intervals: bootstrap over scenarios.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.stats import bootstrap_geomean_ci, geomean
from perfport.wg import evaluate, load_dataset, match_scenarios
from perfport.wg.dataset import WgDataset
from perfport.wg.evaluate import EvalResult
from perfport.wg.heldout import (
    RoundSamples,
    Split,
    heldout_ratios,
    heldout_report,
    load_samples,
    match_rows,
    score,
    size_columns,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"
FIRST = ("xeon16-pocl-8x1", "xeon16-pocl-compact-8x1")
SECOND = (("xeon16-pocl-second-8x1", "xeon16-pocl-8rounds-again.npz"),
          ("xeon16-pocl-compact-second-8x1", "xeon16-pocl-compact-8rounds-again.npz"))  # fmt: skip


def pooled(parts: list[RoundSamples], name: str) -> RoundSamples:
    """Collections of the same sizes and rounds as one."""
    for p in parts[1:]:
        if not np.array_equal(p.sizes, parts[0].sizes):
            raise SystemExit(f"{p.name}: other sizes than {parts[0].name}")
    cat = lambda f: np.concatenate([getattr(p, f) for p in parts])  # noqa: E731
    return RoundSamples(
        name, cat("samples"), parts[0].sizes, cat("device"), cat("kernel"), cat("dataset")
    )


def second_session(data: WgDataset, result: EvalResult) -> list[dict[str, Any]]:
    """The choices of ``result`` (and the shipped table's oracle, which is the first session's,
    and w(32x4)) scored on the second session's rounds of the same scenarios, matched by
    labels and features through the second session's datasets."""
    rows: dict[int, tuple[RoundSamples, int]] = {}  # shipped row -> (rounds, their scenario)
    for rounds_name, table_name in SECOND:
        again = load_dataset(ROOT / "data" / "wg" / "repeat" / table_name)
        rounds = load_samples(ROOT / "data" / "wg" / "rounds" / f"{rounds_name}.samples.npz")
        behind = match_rows(again, rounds)  # again's row -> rounds' scenario
        for i, j in match_scenarios(data, again)[0]:
            if j in behind:
                rows[i] = (rounds, behind[j])
    tests = [(t, c) for t, c in result.choices if t in rows]
    samples = np.concatenate([rows[t][0].samples[[rows[t][1]]] for t, _ in tests])
    cols = size_columns(data.sizes, rows[tests[0][0]][0].sizes)
    picks = {result.method: [cols[c] for _, c in tests],
             "oracle (first session)": [cols[data.oracle[t]] for t, _ in tests],
             "w(32x4)": [cols[data.column(32, 4)]] * len(tests)}  # fmt: skip
    return [{"samples": "xeon16 second session", "split": split.value, "matched": len(tests),
             "rounds": samples.shape[2],
             "scores": [score(samples, np.array(p), name, split, 0).to_json() for name, p in picks.items()]}
            for split in Split]  # fmt: skip


def paired(data: WgDataset, result: EvalResult, rounds: RoundSamples) -> dict[str, Any]:
    """The model's held-out score over w(32x4)'s, scenario by scenario (a paired ratio: its
    geometric mean and bootstrap interval), for each split."""
    match = match_rows(data, rounds)
    cols = size_columns(data.sizes, rounds.sizes)
    tests = [(match[t], cols[c]) for t, c in result.choices if t in match]
    samples = rounds.samples[[j for j, _ in tests]]
    expert = np.full(len(tests), cols[data.column(32, 4)])
    out = {}
    for split in Split:
        ratio = heldout_ratios(samples, np.array([c for _, c in tests]), split) / heldout_ratios(
            samples, expert, split
        )
        out[split.value] = {
            "model_over_w32x4": geomean(ratio),
            "ci95": list(bootstrap_geomean_ci(ratio, 0)),
        }
    return out


def score_all(data: WgDataset, result: EvalResult, rounds: RoundSamples) -> list[dict[str, Any]]:
    return [heldout_report(data, result, rounds, split, 0).to_json() for split in Split]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = load_dataset(SHIPPED)
    (result,) = evaluate(data, ["performance_forest+novel"], ["kernel"], seed=0)
    first = [load_samples(ROOT / "data" / "wg" / "rounds" / f"{n}.samples.npz") for n in FIRST]
    report: dict[str, Any] = {"method": result.method, "partition": "kernel", "first_session": {
        r.name: score_all(data, result, r) for r in [*first, pooled(first, "xeon16 (101)")]}}  # fmt: skip
    report["second_session"] = second_session(data, result)
    report["paired_xeon16_101"] = paired(data, result, pooled(first, "xeon16 (101)"))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"model over w(32x4), paired, 101 scenarios: {report['paired_xeon16_101']}")
    for name, reps in [
        *report["first_session"].items(),
        ("second session", report["second_session"]),
    ]:
        for rep in reps:
            cells = "  ".join(f"{s['choice']} {s['heldout']:.1%} [{s['heldout_ci95'][0]:.1%}, "
                              f"{s['heldout_ci95'][1]:.1%}] / {s['same_table']:.1%}" for s in rep["scores"])  # fmt: skip
            print(f"{name:34s} {rep['split']:9s} n={rep['matched']:3d}  {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
