"""Model-guided search against the default strategy on the loopy matmul's configuration
space (issue 24, item 7): evaluations to reach 95% of the optimum, by replay.

    python experiments/2026-11-26-model-guided/run.py measure --db guided.db   # PoCL, ~5 min
    python experiments/2026-11-26-model-guided/run.py replay                   # no device

``measure`` times every configuration (prefetch on or off, tiles ti x tj, k staged tk at
a time) of ``perfport.model.apps.matmul`` at n = 256 on the default device and counts each
with loopy, writing table.json next to this script. ``replay`` ranks by the shipped linear
model calibrated on the PoCL measurement kernels (src/perfport/datasets/model/
pocl-matmul.csv), refitting after each measurement, and compares with the default strategy
over seeds; it writes replay.json.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np

from perfport._core.records import Problem
from perfport._core.spec import Param
from perfport.space import Space
from perfport.space.space import Constraint

HERE = Path(__file__).parent
DATA = Path("src/perfport/datasets/model")
N = 256
TARGET = 0.95


def space() -> Space:
    tiles = (8, 16, 32)
    params = [Param("prefetch", (0, 1)), Param("ti", tiles), Param("tj", tiles), Param("tk", tiles)]
    return Space(params, [Constraint.of("prefetch == 1 or tk == 8")])


def program(config: dict[str, int]):
    from perfport.model.apps import matmul

    return matmul(bool(config["prefetch"]), config["ti"], tile_j=config["tj"], tile_k=config["tk"])


def measure(db: str) -> None:
    from perfport.devices import get_device
    from perfport.model import StatsCache
    from perfport.model.measure import measure_application

    device, s, cache = get_device(None), space(), StatsCache()
    rows = []
    for index in range(len(s)):
        config = dict(s.config(index))
        name = "matmul-p{prefetch}-{ti}x{tj}x{tk}".format(**config)
        knl = program(config)
        (result,) = measure_application(knl, name, [Problem.of({"n": N})], device, db)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stats = cache.stats(knl).evaluate({"n": N})
        rows.append({"config": config, "time_ms": result.time_ms, "status": result.status.value,
                     "stats": stats.to_json() if hasattr(stats, "to_json") else None})  # fmt: skip
        print(index, name, result.status.value, result.time_ms, flush=True)
    out = {"device": device.name, "device_fingerprint": device.fingerprint, "n": N, "rows": rows}
    (HERE / "table.json").write_text(json.dumps(out, indent=1) + "\n")


def _features(model, configs):
    from perfport.model import StatsCache, input_features

    cache = StatsCache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [input_features(model, cache.stats(program(c)).evaluate({"n": N})) for c in configs]


def evals_to_target(order: list[int], times: np.ndarray) -> int:
    best = np.inf
    for count, index in enumerate(order, 1):
        best = min(best, times[index])
        if np.nanmin(times) / best >= TARGET:
            return count
    return len(order) + 1


def drive(strategy, times: np.ndarray) -> list[int]:
    order = []
    while (index := strategy.ask()) is not None:
        order.append(index)
        value = times[index]
        strategy.tell(index, None if np.isnan(value) else float(value))
    return order


def _table(db: str) -> dict:
    """table.json, or (written from) the store a measure step left, cut short or not."""
    path = HERE / "table.json"
    if path.is_file():
        return json.loads(path.read_text())
    from perfport.model.dataset import from_store

    runs = {r.kernel: r for r in from_store(db)}
    rows = []
    for index in range(len(space())):
        config = dict(space().config(index))
        run = runs.get("app-matmul-p{prefetch}-{ti}x{tj}x{tk}".format(**config))
        rows.append({"config": config, "time_ms": run.time_ms if run else None})
    any_run = next(iter(runs.values()))
    table = {"device": any_run.device, "device_fingerprint": any_run.device_fingerprint,
             "n": N, "rows": rows}  # fmt: skip
    path.write_text(json.dumps(table, indent=1) + "\n")
    return table


def replay(model_file: str, seeds: int, db: str) -> None:
    from perfport.model import Model
    from perfport.model.dataset import KernelFeatures, read_data
    from perfport.model.guided import ModelRanker
    from perfport.strategies import DEFAULT_STRATEGY, make_strategy, strategy_class
    from perfport.strategies.model_guided import ModelGuided

    table = _table(db)
    measured = [r for r in table["rows"] if r["time_ms"]]
    # The configurations measured (a measure step cut short leaves a subset).
    s = Space.from_configs(space().params, [r["config"] for r in measured])
    by_config = {json.dumps(r["config"], sort_keys=True): r["time_ms"] for r in measured}
    configs = [dict(s.config(i)) for i in range(len(s))]
    times = np.array([by_config[json.dumps(c, sort_keys=True)] for c in configs])
    model = Model.load(model_file)
    train = [r for r in read_data(DATA / "pocl-matmul.csv") if r.is_collection]
    base = KernelFeatures().measurements(model, train)
    features = _features(model, configs)
    results: dict[str, object] = {"model": model_file, "configurations": len(s),
                                  "optimum_ms": float(np.nanmin(times))}  # fmt: skip
    for refit in (True, False):
        ranker = ModelRanker(model, base, features)
        predicted = ranker.predict()
        strategy = ModelGuided(s, 0, ranker, refit_every=1 if refit else 10**9)
        order = drive(strategy, times)
        key = "model_guided" if refit else "model_guided_no_refit"
        results[key] = {"evaluations_to_95": evals_to_target(order, times),
                        "order": order, "refits": ranker.refits}  # fmt: skip
        if refit:
            results["initial_prediction_ms"] = [float(p * 1e3) for p in predicted]
    cls = strategy_class(DEFAULT_STRATEGY)
    default = [evals_to_target(drive(make_strategy(cls, s, seed), times), times)
               for seed in range(seeds)]  # fmt: skip
    results[DEFAULT_STRATEGY] = {"evaluations_to_95": default, "mean": float(np.mean(default)),
                                 "median": float(np.median(default))}  # fmt: skip
    results["measured_ms"] = [float(t) for t in times]
    results["configs"] = configs
    (HERE / "replay.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({k: v for k, v in results.items() if k not in
                      ("measured_ms", "configs", "initial_prediction_ms")}, indent=1))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("measure", "replay"))
    parser.add_argument("--db", default="/tmp/guided.db")
    parser.add_argument("--model", default=str(DATA / "matmul-linear.json"))
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    if args.step == "measure":
        measure(args.db)
    else:
        replay(args.model, args.seeds, args.db)


if __name__ == "__main__":
    main()
