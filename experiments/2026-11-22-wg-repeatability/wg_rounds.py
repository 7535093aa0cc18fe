"""How many interleaved rounds make a CPU's work-group oracle reproducible? One run, split.

    python experiments/2026-11-22-wg-repeatability/wg_rounds.py [--samples FILE.npz ...] [--json]
    python experiments/2026-11-22-wg-repeatability/wg_rounds.py --from-db rounds.db --rounds 8 --save FILE.npz --dataset OUT.npz

Data: a collection made with interleaved rounds and a fixed number of timed launches per round
(``perfport wg collect --rounds R --repeats N``): every work-group size of a scenario is
measured once per round, each round in its own random order (``perfport.tune.sweep``), so
each size's samples reshape to (R, N). By default every ``*.samples.npz`` shipped in
``data/wg/rounds/`` (provenance in ``data/PROVENANCE.md``).

For a protocol of n rounds (n = 1, 2, 4, ... up to R/2) the rounds are cut into disjoint pairs
of n-round groups; in each group a size's time is the median of its samples there, as if that
group had been the whole collection. The two groups of a pair are then two independent runs of
the n-round protocol, compared as ``wg_repeatability.compare_runs`` compares two runs: the
correlation of log times and what one group's best size reaches in the other (both
directions). Their geometric mean over scenarios and pairs is the noise ceiling of an n-round
oracle: the most a predictor can be sure to score against it. ``noise`` is the median over
scenarios of the standard deviation across sizes of log(t_A / t_B), a size's run-to-run
scatter. No figure is hard-coded.

``--from-db`` turns a collection's store into the samples file (``--save``) and, with
``--dataset``, a work-group dataset of each size's median over all rounds (as ``perfport wg
dataset`` writes it), which ``wg_repeatability.py`` compares with the shipped data.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import DeviceInfo
from perfport.features import scenario_features
from perfport.kernels import builtin
from perfport.store import Store
from perfport.wg import WgDataset, dataset_from_store, geomean, save_dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wg_repeatability import compare_runs  # a sibling script

ROUNDS = Path(__file__).resolve().parents[2] / "data" / "wg" / "rounds"

_SAMPLES = """
SELECT d.info, k.name, p.key, c.key, r.outcome, s.times
FROM results r JOIN campaigns g ON g.id = r.campaign_id JOIN devices d ON d.id = g.device_id
JOIN kernels k ON k.id = g.kernel_id JOIN problems p ON p.id = g.problem_id
JOIN configs c ON c.id = r.config_id LEFT JOIN samples s ON s.result_id = r.id
WHERE g.status = 'complete'
"""


def samples_from_db(db: str | Path, rounds: int) -> tuple[WgDataset, np.ndarray]:
    """(dataset of medians over all samples, samples (S, W, rounds, repeats) aligned with it;
    NaN where a size did not run)."""
    with Store(db, create=False) as store:
        data = dataset_from_store(store)
        rows = store.query(_SAMPLES)
    column = {(int(wc), int(wr)): k for k, (wc, wr) in enumerate(data.sizes)}
    groups: dict[tuple[str, str, str], dict[int, np.ndarray]] = {}
    for info, kernel, problem, config, outcome, blob in rows:
        if outcome == "ok" and blob is not None:
            wg = json.loads(config)
            times = np.frombuffer(blob, dtype="<f8")
            groups.setdefault((info, kernel, problem), {})[column[(wg["wc"], wg["wr"])]] = times
    counts = {len(t) for sizes in groups.values() for t in sizes.values()}
    if len(counts) != 1 or next(iter(counts)) % rounds:
        raise SystemExit(f"sample counts {sorted(counts)} do not split into {rounds} equal rounds")
    repeats = next(iter(counts)) // rounds
    samples = np.full((len(data), len(data.sizes), rounds, repeats), np.nan)
    for (info, kernel, problem), sizes in groups.items():
        device = DeviceInfo.from_json(json.loads(info))
        features = scenario_features(builtin(kernel), json.loads(problem), device).as_array()
        same = [
            i for i in range(len(data)) if np.allclose(data.features[i], features, equal_nan=True)
        ]
        if len(same) != 1:
            raise SystemExit(f"{kernel} {problem}: {len(same)} dataset rows share its features")
        for w, times in sizes.items():
            samples[same[0], w] = times.reshape(rounds, repeats)
    return data, samples


def protocol_ceilings(samples: np.ndarray) -> list[dict[str, Any]]:
    """One record per protocol of n rounds (module docstring)."""
    total = samples.shape[2]
    out = []
    n = 1
    while 2 * n <= total:
        one, two, corr, noise = [], [], [], []
        for scenario in samples:
            for start in range(0, total - 2 * n + 1, 2 * n):
                a = np.median(scenario[:, start : start + n].reshape(len(scenario), -1), axis=1)
                b = np.median(
                    scenario[:, start + n : start + 2 * n].reshape(len(scenario), -1), axis=1
                )
                sizes, c, first_on_second, second_on_first, _ = compare_runs(a, b)
                if sizes:
                    one.append(first_on_second)
                    two.append(second_on_first)
                    corr.append(c)
                    ran = np.isfinite(a) & np.isfinite(b)
                    noise.append(float(np.std(np.log(b[ran] / a[ran]))))
        out.append({
            "rounds": n, "pairs": len(one), "corr_log_t": float(np.nanmedian(corr)),
            "noise": float(np.median(noise)), "first_best_on_second": geomean(np.array(one)),
            "second_best_on_first": geomean(np.array(two)),
            "worst": float(min(min(one), min(two))),
        })  # fmt: skip
        n *= 2
    return out


def save_samples(path: str | Path, data: WgDataset, samples: np.ndarray) -> None:
    np.savez_compressed(
        path, samples=samples.astype(np.float32), sizes=data.sizes, device=data.device,
        kernel=data.kernel, dataset=data.dataset,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, action="append",
                        help="a samples file (.npz); repeatable (default: data/wg/rounds/*)")  # fmt: skip
    parser.add_argument("--from-db", type=Path, help="a store made with wg collect --rounds")
    parser.add_argument("--rounds", type=int, help="the collection's --rounds (with --from-db)")
    parser.add_argument("--save", type=Path, help="write the samples file here (with --from-db)")
    parser.add_argument("--dataset", type=Path, help="write the median dataset (with --from-db)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.from_db:
        if not args.rounds:
            parser.error("--from-db needs --rounds")
        data, samples = samples_from_db(args.from_db, args.rounds)
        if args.save:
            save_samples(args.save, data, samples)
        if args.dataset:
            save_dataset(data, args.dataset)
        runs = {str(args.from_db): (samples, sorted(set(data.device.tolist())), len(data))}
    else:
        runs = {}
        for path in args.samples or sorted(ROUNDS.glob("*.samples.npz")):
            with np.load(path, allow_pickle=False) as z:
                runs[path.name] = (
                    z["samples"].astype(np.float64),
                    sorted(set(z["device"].tolist())),
                    len(z["kernel"]),
                )
    report = [{"samples": name, "devices": devices, "scenarios": n, "rounds": s.shape[2],
               "repeats": s.shape[3], "protocols": protocol_ceilings(s)}
              for name, (s, devices, n) in runs.items()]  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for run in report:
        print(f"{run['samples']}: {run['scenarios']} scenarios on {', '.join(run['devices'])}; "
              f"{run['rounds']} rounds x {run['repeats']} timed launches per size")  # fmt: skip
        print(f"  {'rounds':>6} {'pairs':>5} {'corr':>6} {'noise':>6} {'1st on 2nd':>10} "
              f"{'2nd on 1st':>10} {'worst':>6}")  # fmt: skip
        for r in run["protocols"]:
            print(f"  {r['rounds']:6d} {r['pairs']:5d} {r['corr_log_t']:6.3f} {r['noise']:6.3f} "
                  f"{r['first_best_on_second']:10.1%} {r['second_best_on_first']:10.1%} "
                  f"{r['worst']:6.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
