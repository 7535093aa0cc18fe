"""Work-group prediction on CPUs (issue 31 item 5): the default model against the same forest
with CPUs as one device class in its novelty test and fallback (``performance_forest+novel_cpu``).

Each split trains on some scenarios of the shipped dataset (or ``--data``) and answers the CPU
scenarios left out, as ``perfport wg evaluate`` does (propose; while the size cannot run,
remember it as refused and ask again); the score is the geometric mean of t_oracle / t_chosen.

- ``kernel``: leave one kernel label out (every device), scored on the CPU scenarios only;
- ``cpu``: leave one CPU set-up out (every kernel), scored on that set-up;
- ``cpu+kernel``: leave one CPU set-up and one kernel label out together: the set-up is new and
  so is the stencil, on every device.

Also reported: w(32x4), and the best fixed size of the training CPUs (known without measuring
the test scenarios). A CPU set-up is a device label and its compute units; ``--add FILE``
merges another dataset (e.g. one thread count of ``gpu_host_collect.sh``), its CPU labels
suffixed with the file's name, so that each file is a set-up of its own. Usage (about 15
minutes on two busy cores):

    python experiments/2026-11-26-wg-cpu/wg_cpu_eval.py --json > experiments/2026-11-26-wg-cpu/eval.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from importlib import resources

import numpy as np

from perfport._core.stats import geomean
from perfport.wg.dataset import WgDataset, load_dataset, merge_datasets
from perfport.wg.predictors import make_predictor
from perfport.wg.predictors.vectors import best_fixed, performance_vectors

METHODS = ("performance_forest+novel", "performance_forest+novel_cpu", "performance_forest")


def choose(predictor: object, data: WgDataset, s: int) -> int:
    """Propose until a size runs, as a launcher would."""
    refused: set[int] = set()
    w = 0
    for _ in range(data.runtimes.shape[1]):
        w = predictor.propose(data.features[s], int(data.max_wg[s]), refused)  # type: ignore[attr-defined]
        if np.isfinite(data.runtimes[s, w]):
            return w
        refused.add(w)
    return w


def with_setups(data: WgDataset, suffix: str = "") -> WgDataset:
    """``data`` with each CPU's device label naming its compute units (and ``suffix``)."""
    cpu = data.features[:, data.feature_names.index("device_is_cpu")] == 1
    units = data.features[:, data.feature_names.index("device_compute_units")]
    labels = np.array([f"{d} [{u:.0f} CU]{suffix}" if c else str(d)
                       for d, u, c in zip(data.device, units, cpu, strict=True)])  # fmt: skip
    return WgDataset(data.sizes, data.runtimes, data.max_wg, data.features, data.feature_names,
                     labels, data.kernel, data.dataset, data.synthetic)  # fmt: skip


def splits(data: WgDataset, name: str) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(label, train rows, test rows): every test row is a CPU scenario."""
    cpu = data.features[:, data.feature_names.index("device_is_cpu")] == 1
    cpus = sorted(set(data.device[cpu].tolist()))
    kernels = sorted(set(data.kernel.tolist()))
    if name == "kernel":
        for k in kernels:
            out = data.kernel == k
            if (out & cpu).any():
                yield k, np.flatnonzero(~out), np.flatnonzero(out & cpu)
    elif name == "cpu":
        for d in cpus:
            out = data.device == d
            yield d, np.flatnonzero(~out), np.flatnonzero(out)
    elif name == "cpu+kernel":
        for d in cpus:
            for k in kernels:
                test = (data.device == d) & (data.kernel == k)
                if test.any():
                    train = (data.device != d) & (data.kernel != k)
                    yield f"{d} / {k}", np.flatnonzero(train), np.flatnonzero(test)


def run(data: WgDataset, partition: str, seed: int, log: bool) -> dict[str, object]:
    oracle = data.oracle
    best = data.runtimes[np.arange(len(data)), oracle]
    expert = data.column(32, 4)
    cpu = data.features[:, data.feature_names.index("device_is_cpu")] == 1
    vectors = performance_vectors(data)
    chosen: dict[str, list[float]] = {m: [] for m in (*METHODS, "w(32x4)", "cpu_fixed")}
    devices: list[str] = []
    novel: list[bool] = []
    for label, train, test in splits(data, partition):
        if log:
            print(f"{partition}: {label} ({len(test)} scenarios)", file=sys.stderr)
        part = data.subset(train)
        fixed = best_fixed(vectors[train], cpu[train])
        for method in METHODS:
            model = make_predictor(method, seed).fit(part)
            for s in test:
                chosen[method].append(best[s] / data.runtimes[s, choose(model, data, s)])
                if method == "performance_forest+novel":
                    novel.append(bool(model.novelty_.novel(data.features[s])))  # type: ignore[attr-defined]
        for s in test:
            chosen["w(32x4)"].append(best[s] / data.runtimes[s, expert])
            chosen["cpu_fixed"].append(best[s] / data.runtimes[s, fixed])
            devices.append(str(data.device[s]))
    where = np.array(devices)
    out: dict[str, object] = {"partition": partition, "seed": seed, "scenarios": len(devices),
                              "novel_to_default": int(np.sum(novel))}  # fmt: skip
    for name, ratios in chosen.items():
        r = np.array(ratios)
        out[name] = {"performance": geomean(r),
                     "per_device": {d: geomean(r[where == d]) for d in sorted(set(devices))}}  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a dataset (.npz); default: the shipped one")
    parser.add_argument("--add", action="append", default=[], help="another dataset (.npz)")
    parser.add_argument("--partitions", default="kernel,cpu,cpu+kernel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = args.data or str(resources.files("perfport.datasets") / "wg" / "stencils.npz")
    data = merge_datasets([with_setups(load_dataset(path))] + [
        with_setups(load_dataset(a), f" {a.rsplit('/', 1)[-1]}") for a in args.add])  # fmt: skip
    results = [run(data, p, args.seed, not args.json) for p in args.partitions.split(",")]
    if args.json:
        names = [path.rsplit("/", 1)[-1], *(a.rsplit("/", 1)[-1] for a in args.add)]
        print(json.dumps({"data": names, "results": results}, indent=1))
        return 0
    for r in results:
        print(
            f"{r['partition']}: {r['scenarios']} CPU scenarios, {r['novel_to_default']} novel to the default model"
        )
        for name in (*METHODS, "w(32x4)", "cpu_fixed"):
            v = r[name]  # type: ignore[index]
            per = ", ".join(f"{d[:24]} {p * 100:.1f}%" for d, p in v["per_device"].items())
            print(f"  {name:32s} {v['performance'] * 100:5.1f}%  ({per})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
