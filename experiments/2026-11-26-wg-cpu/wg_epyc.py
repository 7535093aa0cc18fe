"""A CPU set-up the shipped dataset does not have: the 2-core AMD EPYC (PoCL 3.0-rc2 from pip)
of ``data/wg/rounds/epyc2-pocl-8x1.samples.npz`` (9 scenarios, 8 interleaved rounds; provenance
in data/PROVENANCE.md). Its features are computed here, on the same set-up (the kernel compiled
by PoCL, the device as this machine's PoCL reports it), so run this on a machine with that
device. Each scenario is answered by models trained on the shipped dataset (the EPYC is not in
it), and, for stencils the model never saw, by models trained without the scenario's kernel
label on every device. Scores: t_oracle / t_chosen on the median of the 8 rounds, and on each
half of 4 rounds with the oracle of the other half (the noise ceiling of one half's fastest
size). Usage (a few minutes on two busy cores):

    python experiments/2026-11-26-wg-cpu/wg_epyc.py --json > experiments/2026-11-26-wg-cpu/epyc.json
"""

from __future__ import annotations

import argparse
import json
from importlib import resources

import numpy as np

from perfport._core.stats import geomean
from perfport.devices import get_device
from perfport.features import scenario_features
from perfport.kernels import builtin
from perfport.tune.tune import resolve_problem
from perfport.wg.dataset import load_dataset
from perfport.wg.predictors import make_predictor
from perfport.wg.predictors.vectors import best_fixed, performance_vectors
from perfport.wg.scenarios import scenarios

SAMPLES = "data/wg/rounds/epyc2-pocl-8x1.samples.npz"
METHODS = ("performance_forest+novel", "performance_forest+novel_cpu", "performance_forest")


def choose(predictor: object, x: np.ndarray, times: np.ndarray, max_wg: int) -> int:
    refused: set[int] = set()
    w = 0
    for _ in range(len(times)):
        w = predictor.propose(x, max_wg, refused)  # type: ignore[attr-defined]
        if np.isfinite(times[w]):
            return w
        refused.add(w)
    return w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="opencl:0:0")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = load_dataset(str(resources.files("perfport.datasets") / "wg" / "stencils.npz"))
    z = np.load(SAMPLES)
    if not np.array_equal(z["sizes"], data.sizes):
        raise SystemExit("the samples' sizes are not the dataset's columns")
    samples = z["samples"][..., 0].astype(np.float64)  # (scenarios, sizes, rounds)
    device = get_device(args.device)
    chosen = scenarios(40, (512,))[: len(samples)]
    x = np.array([scenario_features(builtin(s.kernel), resolve_problem(builtin(s.kernel), dict(s.problem)),
                                    device).as_array() for s in chosen])  # fmt: skip
    median = np.median(samples, axis=2)
    halves = np.median(samples[..., :4], axis=2), np.median(samples[..., 4:], axis=2)
    cpu = data.features[:, data.feature_names.index("device_is_cpu")] == 1
    vectors = performance_vectors(data)
    picks: dict[str, dict[str, list[int]]] = {"seen": {}, "unseen": {}}
    for how in picks:
        for method in METHODS:
            picks[how][method] = []
        fitted: dict[str, object] = {}
        for i, kernel in enumerate(z["kernel"]):
            train = np.ones(len(data), dtype=bool) if how == "seen" else data.kernel != kernel
            picks[how].setdefault("cpu_fixed", []).append(best_fixed(vectors[train], cpu[train]))
            picks[how].setdefault("w(32x4)", []).append(data.column(32, 4) or 0)
            for method in METHODS:
                key = f"{method}/{'all' if how == 'seen' else kernel}"
                if key not in fitted:
                    fitted[key] = make_predictor(method, args.seed).fit(
                        data.subset(np.flatnonzero(train))
                    )
                picks[how][method].append(
                    choose(fitted[key], x[i], median[i], device.max_work_group_size)
                )
        if how == "seen":
            model = fitted["performance_forest+novel/all"]
            novel = [bool(model.novelty_.novel(row)) for row in x]  # type: ignore[attr-defined]
            grouped = fitted["performance_forest+novel_cpu/all"]
            novel_cpu = [bool(grouped.novelty_.novel(row)) for row in x]  # type: ignore[attr-defined]
    rows = np.arange(len(samples))

    def score(t: np.ndarray, w: list[int]) -> float:
        return geomean(np.nanmin(t, axis=1) / t[rows, w])

    ceiling = geomean(np.concatenate([np.nanmin(b, axis=1) / b[rows, np.nanargmin(a, axis=1)]
                                      for a, b in (halves, halves[::-1])]))  # fmt: skip
    out = {"scenarios": len(samples), "device": str(z["device"][0]), "features_from": device.name,
           "novel_to_default": int(sum(novel)), "novel_to_novel_cpu": int(sum(novel_cpu)),
           "half_ceiling": ceiling,
           **{how: {m: {"performance": score(median, w), "per_scenario": [
               float(np.nanmin(median[i]) / median[i, w[i]]) for i in rows]}
               for m, w in methods.items()} for how, methods in picks.items()}}  # fmt: skip
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{out['scenarios']} scenarios; novel to the default model: {out['novel_to_default']}, "
          f"to +novel_cpu: {out['novel_to_novel_cpu']}; one half's oracle on the other: {ceiling * 100:.1f}%")  # fmt: skip
    for how in picks:
        for m in picks[how]:
            print(f"  {how:6s} {m:32s} {out[how][m]['performance'] * 100:5.1f}%")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
