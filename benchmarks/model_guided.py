"""Model-guided search against the default strategy on the application kernels' full spaces.

    pip install -e '.[pocl,model]'
    python benchmarks/model_guided.py measure --db guided.db     # PoCL, about 15 min on 2 cores
    python benchmarks/model_guided.py replay --db guided.db --json out.json   # no device
    python benchmarks/model_guided.py all --smoke                # about two minutes: tiny sizes

Goal (issue 24): model-guided search reaches 95% of the optimum in at most a third of the
evaluations of the default strategy on the application kernels. ``measure`` times every
configuration of three spaces on the default device (resumable: the store keeps what was
measured): the loopy matmul (prefetch on or off, ti x tj work-groups, k staged tk at a time;
36 configurations), the four DG variants at three work-group tiles (12) and the
finite-difference stencil at six work-group sizes (6). ``replay`` drives each strategy over
the stored times: ``ModelGuided`` with ``ModelRanker`` (--model, calibrated on the
measurement kernels of --data only, refitted after every measurement; deterministic), and
the default strategy and random search over --seeds seeds. Evaluations to 95% count every
configuration asked, failed ones included. Give ``measure`` a store of its own: a store files
a kernel whose source it already holds (DG at tile 16 and FD at lsize 16 are the built-in
variants) under the name it was first stored with, where ``replay`` would not find it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.records import Problem
from perfport.model.spaces import (  # the spaces live in the library: perfport tune uses them
    DEFAULT_SIZES,
    FD_LSIZES,  # noqa: F401 (tests read it here)
    MULTIPLE,
    SearchSpace,
    config_features,
    spaces,
)
from perfport.space import Space

ROOT = Path(__file__).parents[1]
DATA = ROOT / "src/perfport/datasets/model"
TARGET = 0.95
SMOKE_SIZES = {"matmul": 96, "dg": 96, "fd": 1120}


def measure(db: str, limit: int | None, sizes: dict[str, int], device_id: str | None) -> None:
    """Time every configuration not yet in ``db`` on the device (default: the default one)."""
    from perfport.devices import get_device
    from perfport.model.measure import measure_application

    device = get_device(device_id)
    for s in spaces(sizes):
        for config in s.configs(limit):
            (result,) = measure_application(
                s.program(config), s.label(config), [Problem.of(s.sizes)], device, db
            )
            print(s.name, config, result.status.value, result.time_ms, flush=True)


def evals_to_target(order: Sequence[int], times: np.ndarray) -> int:
    """Evaluations until the best so far is within 95% of the optimum (len + 1: never)."""
    optimum, best = float(np.nanmin(times)), np.inf
    for count, index in enumerate(order, 1):
        if not np.isnan(times[index]):
            best = min(best, float(times[index]))
        if optimum / best >= TARGET:
            return count
    return len(order) + 1


def drive(strategy: Any, times: np.ndarray) -> list[int]:
    order = []
    while (index := strategy.ask()) is not None:
        order.append(index)
        value = times[index]
        strategy.tell(index, None if np.isnan(value) else float(value))
    return order


def _times(db: str, s: SearchSpace, configs: list[dict[str, Any]]) -> np.ndarray:
    from perfport.model.dataset import from_store

    key = Problem.of(s.sizes).key
    stored = {(r.kernel, r.problem.key): r.time_ms for r in from_store(db)}
    return np.array(
        [stored.get((f"app-{s.label(c)}", key), np.nan) or np.nan for c in configs], float
    )


def _features(
    s: SearchSpace, configs: list[dict[str, Any]], model: Any, cache: Any, inputs: Any
) -> list[dict[str, float] | None]:
    """Each configuration's model inputs; None (said on stderr) where loopy cannot count it,
    so the model ranks it last and the search still runs."""

    def uncounted(config: Any, why: str) -> None:
        print(f"{s.name} {dict(config)}: not counted ({why})", file=sys.stderr)

    return config_features(s, configs, s.sizes, partial(inputs, model), cache, uncounted)


def replay_space(
    s: SearchSpace, times: np.ndarray, configs: list[dict[str, Any]], model_file: str,
    data: str, seeds: int, nonnegative: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Evaluations to 95% of the optimum for each strategy on one space's stored times."""
    from perfport.model import Model, StatsCache, input_features
    from perfport.model.dataset import KernelFeatures, read_data
    from perfport.model.guided import ModelRanker
    from perfport.strategies import DEFAULT_STRATEGY, make_strategy, strategy_class
    from perfport.strategies.model_guided import ModelGuided

    space = Space.from_configs(s.space.params, configs)
    model = Model.load(model_file)
    kernels = KernelFeatures()
    usable, skipped = kernels.usable([r for r in read_data(data) if r.is_collection])
    for k in skipped:  # on stderr: the tables on stdout stay whole
        print(f"{s.name}: calibration {k.line()}", file=sys.stderr)
    base = kernels.measurements(model, usable)
    device = usable[0].device if usable else ""  # the data's device: its residency limits
    features = _features(s, configs, model, StatsCache(),
                         partial(input_features, device=device))  # fmt: skip
    ranker = ModelRanker(model, base, features, device, nonnegative=nonnegative)
    predicted = ranker.predict()
    guided = evals_to_target(drive(ModelGuided(space, 0, ranker), times), times)
    out: dict[str, Any] = {
        "space": s.name, "sizes": s.sizes, "configurations": len(configs),
        "measured": int(np.sum(~np.isnan(times))), "optimum_ms": float(np.nanmin(times)),
        "model_guided": guided, "refits": ranker.refits,
        "skipped": [k.to_json() for k in skipped],
        "uncounted": [c for c, f in zip(configs, features, strict=True) if f is None],
    }  # fmt: skip
    for name in (DEFAULT_STRATEGY, "random"):
        cls = strategy_class(name)
        runs = [evals_to_target(drive(make_strategy(cls, space, seed), times), times)
                for seed in range(seeds)]  # fmt: skip
        out[name] = {"evaluations": runs, "median": float(statistics.median(runs)),
                     "mean": float(np.mean(runs))}  # fmt: skip
    out["ratio_guided_default"] = guided / out[DEFAULT_STRATEGY]["median"]
    out["rows"] = [{"config": c, "measured_ms": None if np.isnan(t) else float(t),
                    "predicted_ms": None if np.isnan(p) else float(p * 1e3)}
                   for c, t, p in zip(configs, times, predicted, strict=True)]  # fmt: skip
    return out


def replay(
    db: str, model: str, data: str, seeds: int, limit: int | None, sizes: dict[str, int],
    nonnegative: bool = False,
) -> dict:  # fmt: skip
    from perfport.strategies import DEFAULT_STRATEGY

    results = []
    for s in spaces(sizes):
        configs = s.configs(limit)
        times = _times(db, s, configs)
        if np.all(np.isnan(times)):
            print(f"{s.name}: nothing measured in {db}; run the measure step first")
            continue
        keep = [i for i, t in enumerate(times) if not np.isnan(t)]
        configs, times = [configs[i] for i in keep], times[keep]
        results.append(replay_space(s, times, configs, model, data, seeds, nonnegative))
    bounded = ", costs bounded at 0" if nonnegative else ""
    print(f"Evaluations to 95% of the optimum ({seeds} seeds; model: {Path(model).name}"
          f"{bounded})")  # fmt: skip
    print(f"| space | configs | model-guided | {DEFAULT_STRATEGY} median | random median | ratio |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['space']} | {r['measured']} | {r['model_guided']} | "
              f"{r[DEFAULT_STRATEGY]['median']:g} | {r['random']['median']:g} | "
              f"{r['ratio_guided_default']:.2f} |")  # fmt: skip
    ratios = [r["ratio_guided_default"] for r in results]
    met = bool(ratios) and max(ratios) <= 1 / 3
    verdict = "met" if met else "not met"
    print(f"goal (model-guided <= 1/3 of the default on every space): {verdict}")

    def shown(path: str) -> str:  # repository-relative where it can be, so pages travel
        resolved = Path(path).resolve()
        return str(
            resolved.relative_to(ROOT.resolve())
            if resolved.is_relative_to(ROOT.resolve())
            else path
        )

    return {"model": shown(model), "data": shown(data), "seeds": seeds, "goal_met": met,
            "nonnegative": nonnegative, "spaces": results}  # fmt: skip


def _parse_sizes(parser: argparse.ArgumentParser, text: str) -> dict[str, int]:
    sizes = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        if name not in DEFAULT_SIZES or not value.isdigit() or int(value) % MULTIPLE[name]:
            parser.error(f"--sizes {item}: give SPACE=N with SPACE one of "
                         f"{', '.join(DEFAULT_SIZES)} and N a multiple of its tiles "
                         f"({', '.join(f'{k}: {v}' for k, v in MULTIPLE.items())})")  # fmt: skip
        sizes[name] = int(value)
    return sizes


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("step", choices=("measure", "replay", "all"))
    parser.add_argument("--db", default="/tmp/perfport-guided.db")
    parser.add_argument("--model", default=str(DATA / "matmul-linear.json"))
    parser.add_argument("--data", default=str(DATA / "pocl-paper.csv"),
                        help="measurement kernels to calibrate on (a model data CSV)")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--nonnegative", action="store_true",
                        help="calibrate with every cost bounded at 0 (replay)")  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="write the replay's results here")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, 3 configurations")
    parser.add_argument("--device", help="a device id of 'perfport devices' (measure)")
    parser.add_argument("--sizes", default="", metavar="SPACE=N,...",
                        help="problem sizes, e.g. matmul=2048,dg=131072,fd=8960 (default "
                        + ",".join(f"{k}={v}" for k, v in DEFAULT_SIZES.items()) + ")")  # fmt: skip
    args = parser.parse_args(argv)
    limit = 3 if args.smoke else None
    seeds = 3 if args.smoke else args.seeds
    sizes = {**(SMOKE_SIZES if args.smoke else {}), **_parse_sizes(parser, args.sizes)}
    if args.step in ("measure", "all"):
        measure(args.db, limit, sizes, args.device)
    if args.step in ("replay", "all"):
        out = replay(args.db, args.model, args.data, seeds, limit, sizes, args.nonnegative)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
