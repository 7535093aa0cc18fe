"""Work-group predictions for stencils no model was trained on, checked on the device itself.

    python3 experiments/2026-11-24-wg-live/wg_live.py measure --device ID --out DIR [--sizes 1024,4096] [--rounds 4] [--kernels ...]
    python experiments/2026-11-24-wg-live/wg_live.py report DIR [DIR ...] [--json]

``measure`` (on the device's machine; needs neither scikit-learn nor llvmlite) measures every
legal work-group size of each scenario below (``perfport.tune.sweep``: one warm-up and five
timed launches per size in each of ``--rounds`` interleaved rounds;
outputs checked against the default size w(32x4)) into DIR/live.db. A size's time is the
median of all its timed launches.

``report`` (here, where the shipped dataset's kernel features were computed, with the same
PoCL) trains ``performance_forest``, ``performance_forest+fixed`` and
``performance_forest+novel`` on the shipped dataset, asks each for a size for each measured
scenario as ``perfport wg predict`` does (``predict_wg``: features from the kernel compiled by
PoCL and from the device's stored queries), and prints each choice's fraction of the fastest
size measured (t_best / t_chosen), their geometric means, and the same for fixed sizes: the
human expert's w(32x4), the device set-up's best fixed size in the shipped dataset, and the
best single size over these scenarios in hindsight (one device set-up per report). It also
says how reproducible the fastest size is: each half of the samples picks its fastest size,
timed on the other half.

The scenarios are kernels outside the shipped dataset: gaussian blurs of radius 2 and 4 (the
dataset has radii 1, 3 and 5) and two stencils described as a user would
(``docs/wg.md#your-own-stencils``): ``cross`` (the docs' example, borders 2 and 3) and
``box5`` (a 5 x 5 mean, borders 2), all in float, at each of ``--sizes`` squared.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

METHODS = ("performance_forest", "performance_forest+fixed", "performance_forest+novel")
DESCRIBED = {
    "cross": {"body": "return (OUT)(GET(0, -2) + GET(0, 2) + GET(-3, 0) + GET(3, 0));",
              "north": 2, "south": 2, "east": 3, "west": 3},
    "box5": {"body": "float s = 0.0f; for (int dy = -2; dy <= 2; ++dy) for (int dx = -2; dx <= 2; ++dx) "
                     "s += (float)GET(dx, dy); return (OUT)(s / 25.0f);",
             "north": 2, "south": 2, "east": 2, "west": 2},
}  # fmt: skip
_SCENARIOS = """
SELECT g.id, p.key, d.info, g.settings, k.source FROM campaigns g JOIN kernels k ON k.id = g.kernel_id
JOIN problems p ON p.id = g.problem_id JOIN devices d ON d.id = g.device_id
WHERE k.name = ? AND g.status = 'complete' ORDER BY d.info, g.id
"""
_TIMES = """
SELECT c.key, r.outcome, r.median_ms, s.times FROM results r JOIN configs c ON c.id = r.config_id
LEFT JOIN samples s ON s.result_id = r.id WHERE r.campaign_id = ?
"""


def _kernels(out: Path) -> list[tuple[str, Any, dict[str, Any]]]:
    """(label, kernel for tune/predict, extra problem values) of each scenario family."""
    from perfport.kernels import builtin

    found: list[tuple[str, Any, dict[str, Any]]] = [
        (f"gaussian[r={r}]", builtin("gaussian"), {"radius": r}) for r in (2, 4)
    ]
    for name, described in DESCRIBED.items():
        path = out / f"{name}.json"
        path.write_text(json.dumps({"name": name, **described}))
        found.append((name, path, {}))
    return found


def measure(args: argparse.Namespace) -> None:
    from perfport.devices import get_device
    from perfport.measure import RunSettings, Timing
    from perfport.tune.sweep import Gold, sweep
    from perfport.tune.tune import resolve_kernel

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = None
    for label, kernel, extra in _kernels(out):
        if args.kernels and label not in args.kernels:
            continue
        spec = resolve_kernel(kernel)
        device = device or get_device(args.device, spec.language)
        problems = [{"width": n, "height": n, "dtype": "float", **extra} for n in args.sizes]
        steps = sweep(spec, problems, device=device, db=out / "live.db",
                      settings=RunSettings(timing=Timing.fixed(5)), gold=Gold.DEFAULT_CONFIG,
                      rounds=args.rounds)  # fmt: skip
        for problem, step in zip(problems, steps, strict=False):
            print(f"{label} {problem['width']}: {step.measured} sizes in {step.seconds:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip


def _launches(settings: str) -> int | None:
    """Timed launches per round of a sweep's settings, or None where their number varied (then
    the stored samples cannot be cut into rounds)."""
    timing = json.loads(settings)["timing"]
    fixed = timing["min_repeats"] == timing["max_repeats"]
    return int(timing["min_repeats"]) if fixed else None


def _as_measured(spec: Any, source: str) -> Any:
    """The spec with the source its sweep timed. Described stencils have since gained a guard
    on GET offsets that are not constants (box5's loop), with a fault-flag argument: a stored
    sweep of the older source keeps it, so its features and predictions are those of the
    kernel measured."""
    if source == spec.source:
        return spec
    args = tuple(a for a in spec.args if not spec.fault_flag or a.name != spec.fault_flag)
    return dataclasses.replace(spec, source=source, args=args, fault_flag="")


def _measured(out: Path) -> list[dict[str, Any]]:
    """Each scenario of DIR/live.db (or DIR/live.db.gz, as committed): its label, spec,
    problem, device, every size's time (None where the size did not run), its samples (round
    by round) and the timed launches per round."""
    from perfport._core import DeviceInfo
    from perfport.store import Store
    from perfport.tune.tune import resolve_kernel

    found = []
    with tempfile.TemporaryDirectory() as scratch:
        db = out / "live.db"
        if not db.is_file() and (out / "live.db.gz").is_file():
            db = Path(scratch) / "live.db"
            db.write_bytes(gzip.decompress((out / "live.db.gz").read_bytes()))
        with Store(db, create=False) as store:
            for label, kernel, extra in _kernels(Path(scratch)):
                spec = resolve_kernel(kernel)
                for campaign, key, info, settings, source in store.query(_SCENARIOS, (spec.name,)):
                    problem = json.loads(key)
                    if any(problem.get(k) != v for k, v in extra.items()):
                        continue  # another radius of the same kernel
                    times, samples = {}, {}
                    for config, outcome, median, blob in store.query(_TIMES, (campaign,)):
                        wg = json.loads(config)
                        size = (int(wg["wc"]), int(wg["wr"]))
                        times[size] = median if outcome == "ok" else None
                        if outcome == "ok" and blob:
                            samples[size] = np.frombuffer(blob, dtype="<f8")
                    found.append({"kernel": label, "spec": _as_measured(spec, source),
                                  "problem": problem,
                                  "device": DeviceInfo.from_json(json.loads(info)),
                                  "times": times, "samples": samples,
                                  "launches": _launches(settings)})  # fmt: skip
    return found


def _halves(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """How reproducible the fastest size is: each half of every size's samples (the first and
    the last rounds) picks its fastest size, timed on the other half; geometric means."""
    scores: tuple[list[float], list[float]] = ([], [])
    for r in rows:
        first = {k: float(np.median(v[: len(v) // 2])) for k, v in r["samples"].items()}
        second = {k: float(np.median(v[len(v) // 2 :])) for k, v in r["samples"].items()}
        for out, pick, on in ((scores[0], first, second), (scores[1], second, first)):
            out.append(min(on.values()) / on[min(pick, key=pick.__getitem__)])
    return float(np.exp(np.mean(np.log(scores[0])))), float(np.exp(np.mean(np.log(scores[1]))))


def _rounds(rows: list[dict[str, Any]], sizes: list[tuple[int, int]]) -> np.ndarray:
    """(scenarios, sizes, rounds, launches): every timed launch, cut into the rounds the sweep
    stored one after the other; NaN where a size did not run. Exits where the samples do not
    cut into at least two equal rounds (then no held-out split exists)."""
    shapes = {
        (len(v) // r["launches"], r["launches"]) if r["launches"] and len(v) % r["launches"] == 0
        else (0, 0)
        for r in rows for v in r["samples"].values()
    }  # fmt: skip
    (rounds, launches) = min(shapes, default=(0, 0))
    if len(shapes) != 1 or rounds < 2:
        raise SystemExit(
            "these sweeps' samples do not cut into two or more equal rounds of fixed launches "
            f"(rounds x launches found: {sorted(shapes)}); measure with --rounds 2 or more"
        )
    out = np.full((len(rows), len(sizes), rounds, launches), np.nan)
    for i, r in enumerate(rows):
        for j, size in enumerate(sizes):
            if size in r["samples"]:
                out[i, j] = r["samples"][size].reshape(rounds, launches)
    return out


def _heldout(
    rows: list[dict[str, Any]], choices: dict[str, list[tuple[int, int]]]
) -> list[dict[str, Any]]:
    """Each choice scored on held-out rounds (``perfport.wg.heldout``) beside its same-table
    score, both with bootstrap intervals over the scenarios, for both splits of the rounds.
    The models never saw these kernels, so their choices were made on none of these rounds;
    the oracle (each scenario's fastest size over every round) and the best fixed size in
    hindsight saw them all, so their held-out scores are biased up."""
    from perfport.wg.heldout import Split, score

    sizes = sorted({k for r in rows for k in r["samples"]})
    samples = _rounds(rows, sizes)
    column = {s: j for j, s in enumerate(sizes)}
    oracle = [min((s for s, t in r["times"].items() if t is not None),
                  key=lambda s, r=r: r["times"][s]) for r in rows]  # fmt: skip
    named = {**{m: c for m, c in choices.items() if m in METHODS}, "oracle": oracle,
             **{m: c for m, c in choices.items() if m not in METHODS}}  # fmt: skip
    return [
        {"split": split.value, "rounds": samples.shape[2],
         "scores": [score(samples, np.array([column.get(c, -1) for c in picks], dtype=np.int64),
                          name, split).to_json() for name, picks in named.items()]}
        for split in Split
    ]  # fmt: skip


def _print_heldout(heldout: list[dict[str, Any]]) -> None:
    for part in heldout:
        print(f"\nheld-out rounds ({part['split']} of {part['rounds']} rounds): the fastest size "
              "of one group timed against the choice in the other, both ways; geometric means "
              "over the scenarios, 95% bootstrap intervals over them\n")  # fmt: skip
        print("| choice | scenarios | held-out | same-table |\n|---|---:|---:|---:|")
        for s in part["scores"]:
            (hl, hh), (sl, sh) = s["heldout_ci95"], s["same_table_ci95"]
            print(f"| {s['choice']} | {s['scenarios']} | {s['heldout']:.3f} [{hl:.3f}, {hh:.3f}] "
                  f"| {s['same_table']:.3f} [{sl:.3f}, {sh:.3f}] |")  # fmt: skip


def _device_fixed(data: Any, device: str) -> tuple[int, int] | None:
    """The device set-up's best fixed size in the shipped dataset (what ``+fixed`` falls back
    to), or None where the dataset does not have the set-up."""
    from perfport.wg.predictors.vectors import best_fixed as _best_fixed
    from perfport.wg.predictors.vectors import performance_vectors as _performance_vectors

    rows = data.device == device
    if not rows.any():
        return None
    c, r = data.sizes[_best_fixed(_performance_vectors(data), rows)]
    return int(c), int(r)


def report(args: argparse.Namespace) -> None:
    from perfport.wg import load_dataset
    from perfport.wg.model import train
    from perfport.wg.predict import predict_wg

    rows = [row for folder in args.dirs for row in _measured(Path(folder))]
    if not rows:
        raise SystemExit(f"{' '.join(args.dirs)}: no complete scenario of this script")
    devices = sorted({f"{r['device'].name} ({r['device'].backend.value})" for r in rows})
    if len(devices) > 1:
        raise SystemExit(f"one device set-up per report, not {', '.join(devices)}")
    shipped = resources.files("perfport").joinpath("datasets", "wg", "stencils.npz")
    with resources.as_file(shipped) as path:
        data = load_dataset(path)
    models = {m: train(data, m) for m in METHODS}
    ran = [{k: t for k, t in r["times"].items() if t is not None} for r in rows]
    best = [min(t.values()) for t in ran]
    common = set.intersection(*(set(t) for t in ran))
    hindsight = max(
        common, key=lambda s: sum(np.log(b / t[s]) for b, t in zip(best, ran, strict=True))
    )
    choices: dict[str, list[tuple[int, int]]] = {m: [] for m in METHODS}
    novel = []
    for r in rows:
        answers = {
            m: predict_wg(model, r["spec"], r["problem"], r["device"])
            for m, model in models.items()
        }
        for m, answer in answers.items():
            choices[m].append(answer.wg)
        novel.append(answers["performance_forest+novel"].novel)
    choices["w(32x4)"] = [(32, 4)] * len(rows)
    fixed = _device_fixed(data, devices[0])
    if fixed is not None:
        choices[f"the device's fixed size in the dataset ({fixed[0]}x{fixed[1]})"] = [fixed] * len(
            rows
        )
    choices[f"best fixed in hindsight ({hindsight[0]}x{hindsight[1]})"] = [hindsight] * len(rows)
    # A chosen size that did not run scores 0 (floored at 1e-9 in the mean): none did here.
    fraction = {m: [b / t[c] if c in t else 0.0 for b, t, c in zip(best, ran, cs, strict=True)]
                for m, cs in choices.items()}  # fmt: skip
    summary = {m: float(np.exp(np.mean(np.log(np.maximum(f, 1e-9))))) for m, f in fraction.items()}
    halves = _halves(rows)
    heldout = _heldout(rows, choices)
    if args.json:
        print(json.dumps({"devices": devices, "geomean": summary, "halves": halves,
                          "heldout": heldout,
                          "scenarios": [{"kernel": r["kernel"], "width": r["problem"]["width"],
                                         "device": r["device"].name, "backend": r["device"].backend.value,
                                         "novel": novel[i],
                                         **{m: {"wg": list(choices[m][i]), "fraction": fraction[m][i]}
                                            for m in choices}}
                                        for i, r in enumerate(rows)]}, indent=1))  # fmt: skip
        return
    print(f"{devices[0]}: fraction of the fastest size measured (the size chosen)\n")
    print("| scenario | novel | " + " | ".join(choices) + " |")
    print("|---|---|" + "---:|" * len(choices))
    for i, r in enumerate(rows):
        cells = " | ".join(
            f"{fraction[m][i]:.3f} ({choices[m][i][0]}x{choices[m][i][1]})" for m in choices
        )
        name = f"{r['kernel']} {r['problem']['width']}^2, {r['device'].backend.value}"
        print(f"| {name} | {novel[i]} | {cells} |")
    print("| geometric mean | | " + " | ".join(f"**{summary[m]:.3f}**" for m in choices) + " |")
    print(f"\nhow reproducible the fastest size is: the first half of the samples' fastest size "
          f"on the second half {halves[0]:.3f}, the second's on the first {halves[1]:.3f}")  # fmt: skip
    _print_heldout(heldout)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--device", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")], default=[1024, 4096])
    m.add_argument("--rounds", type=int, default=4)
    m.add_argument(
        "--kernels", type=lambda s: s.split(","), help="only these (labels, e.g. cross,box5)"
    )
    r = sub.add_parser("report")
    r.add_argument("dirs", nargs="+", metavar="DIR")
    r.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.command == "measure":
        measure(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
