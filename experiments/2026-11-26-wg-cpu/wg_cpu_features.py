"""CPU features that carry over between CPUs (issue 31, item 2): the default model on the
shipped features against the same model on CPU-portable ones, scored on the CPU scenarios.

What the dataset's device record holds for a CPU is compute units, local memory, the largest
work-group and work-item sizes, and the type. SIMD width, cache sizes and the preferred vector
width are not recorded (``DeviceInfo`` has no such field, and the 2-core Intel set-up's machine
is gone), so they cannot be tried on this data. Of what is recorded, on a CPU the local memory
and the work-group limits are PoCL settings (local memory is emulated in ordinary memory; one
PoCL reports 1 MiB, another 2 MiB), not properties of the chip. ``portable`` therefore

- sets those four features to 0 on every CPU row (a CPU is then its thread count), and
- adds ``data_log2_cells_per_unit``: log2(grid cells / compute units), the work each hardware
  thread (or GPU multiprocessor) gets, which carries between thread counts and problem sizes.

Partitions as ``wg_cpu_eval.py`` (``kernel``: leave a kernel label out, test its CPU scenarios;
``cpu``: leave a CPU set-up out), plus the AMD EPYC set-up that the dataset lacks (``epyc``,
trained on everything; features computed on this machine's PoCL, so run it where
``opencl:0:0`` is that set-up, or pass ``--partitions kernel,cpu``). Beside each score, the
paired bootstrap 95% interval of the difference (portable minus shipped, in points of the
geometric mean over the same scenarios): a difference inside it is noise. Usage (about 10
minutes on two busy cores):

    python experiments/2026-11-26-wg-cpu/wg_cpu_features.py --json > experiments/2026-11-26-wg-cpu/features.json
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

import numpy as np

from perfport.wg.dataset import WgDataset, load_dataset
from perfport.wg.predictors import make_predictor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wg_cpu_eval import choose, splits, with_setups  # sibling scripts
from wg_epyc import SAMPLES
from wg_epyc import choose as epyc_choose

HERE = Path(__file__).resolve().parent

METHOD = "performance_forest+novel"
SETTINGS = (
    "device_log2_local_mem",
    "device_log2_max_work_group",
    "device_log2_max_items_x",
    "device_log2_max_items_y",
)
PER_UNIT = "data_log2_cells_per_unit"


def portable_features(x: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """(S, F + 1): ``x`` with a CPU's PoCL settings zeroed and the cells per compute unit."""
    x = np.array(x, dtype=np.float64, ndmin=2)
    cpu = x[:, names.index("device_is_cpu")] == 1
    for name in SETTINGS:
        x[cpu, names.index(name)] = 0.0
    units = np.maximum(x[:, names.index("device_compute_units")], 1.0)
    per_unit = x[:, names.index("data_log2_cells")] - np.log2(units)
    return np.column_stack([x, per_unit])


def portable(data: WgDataset) -> WgDataset:
    names = tuple(data.feature_names)
    return WgDataset(data.sizes, data.runtimes, data.max_wg, portable_features(data.features, names),
                     (*names, PER_UNIT), data.device, data.kernel, data.dataset, data.synthetic)  # fmt: skip


def paired(a: np.ndarray, b: np.ndarray, seed: int, draws: int = 2000) -> dict[str, float]:
    """Geometric means of ``a`` and ``b`` (ratios in (0, 1], the same scenarios) and the
    bootstrap 95% interval of their difference, in points."""
    la, lb = np.log(a), np.log(b)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(a), (draws, len(a)))
    diff = 100 * (np.exp(lb[pick].mean(1)) - np.exp(la[pick].mean(1)))
    lo, hi = np.percentile(diff, [2.5, 97.5])
    return {"shipped": float(np.exp(la.mean())), "portable": float(np.exp(lb.mean())),
            "diff_points": float(100 * (np.exp(lb.mean()) - np.exp(la.mean()))),
            "diff_ci95": [float(lo), float(hi)], "scenarios": len(a)}  # fmt: skip


def held_out(data: WgDataset, partition: str, seed: int) -> dict[str, object]:
    best = data.runtimes[np.arange(len(data)), data.oracle]
    both = {"shipped": data, "portable": portable(data)}
    ratios: dict[str, list[float]] = {k: [] for k in both}
    devices: list[str] = []
    for label, train, test in splits(data, partition):
        print(f"{partition}: {label} ({len(test)} scenarios)", file=sys.stderr)
        for name, d in both.items():
            model = make_predictor(METHOD, seed).fit(d.subset(train))
            ratios[name] += [best[s] / d.runtimes[s, choose(model, d, s)] for s in test]
        devices += [str(data.device[s]) for s in test]
    a, b, where = np.array(ratios["shipped"]), np.array(ratios["portable"]), np.array(devices)
    return {"partition": partition, **paired(a, b, seed),
            "per_device": {d: paired(a[where == d], b[where == d], seed)
                           for d in sorted(set(devices))}}  # fmt: skip


def epyc_scenarios(data: WgDataset, device_id: str) -> tuple[np.ndarray, np.ndarray]:
    """(features, median times) of the EPYC's scenarios, as ``wg_epyc.py`` builds them."""
    from perfport.devices import get_device
    from perfport.features import scenario_features
    from perfport.kernels import builtin
    from perfport.tune.tune import resolve_problem
    from perfport.wg.scenarios import scenarios

    z = np.load(HERE.parents[1] / SAMPLES)
    if not np.array_equal(z["sizes"], data.sizes):
        raise SystemExit("the samples' sizes are not the dataset's columns")
    times = np.median(z["samples"][..., 0].astype(np.float64), axis=2)
    device = get_device(device_id)
    x = np.array([scenario_features(builtin(s.kernel), resolve_problem(builtin(s.kernel), dict(s.problem)),
                                    device).as_array() for s in scenarios(40, (512,))[: len(times)]])  # fmt: skip
    return x, times


def epyc(data: WgDataset, seed: int) -> dict[str, object]:
    """The EPYC's 9 scenarios, answered by models trained on the whole shipped dataset."""
    x, times = epyc_scenarios(data, "opencl:0:0")
    names = tuple(data.feature_names)
    best = np.nanmin(times, axis=1)
    out = {}
    for name, d, xs in (
        ("shipped", data, x),
        ("portable", portable(data), portable_features(x, names)),
    ):
        model = make_predictor(METHOD, seed).fit(d)
        out[name] = np.array([best[i] / times[i, epyc_choose(model, xs[i], times[i], 4096)]
                              for i in range(len(xs))])  # fmt: skip
    return {"partition": "epyc", **paired(out["shipped"], out["portable"], seed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", default="kernel,cpu,epyc")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = with_setups(
        load_dataset(str(resources.files("perfport.datasets") / "wg" / "stencils.npz"))
    )
    results = [epyc(data, args.seed) if p == "epyc" else held_out(data, p, args.seed)
               for p in args.partitions.split(",")]  # fmt: skip
    if args.json:
        print(json.dumps({"method": METHOD, "seed": args.seed, "results": results}, indent=1))
        return 0
    for r in results:
        lo, hi = r["diff_ci95"]  # type: ignore[misc]
        print(f"{r['partition']}: {r['scenarios']} CPU scenarios: shipped {r['shipped']:.1%}, "
              f"portable {r['portable']:.1%} ({r['diff_points']:+.1f} points, 95% {lo:+.1f} to {hi:+.1f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
