"""How perfport's convolution2d on the H100 rates the convolution_milo space next to the hub's
GPUs: rank correlation, each GPU's best configuration on the others, the shared-memory split.

    python docs/results/2026-11-23-convolution2d-h100/compare.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from perfport.select.normalise import relative
from perfport.select.device_caches import load_caches

ROOT = Path(__file__).resolve().parents[3]


def ranks(x: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(x, axis=1), axis=1).astype(float)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    hub = args.data / "kerneltuner-benchmark_hub" / "convolution_milo"
    files = [hub / f"{d}.json.gz" for d in ("A100", "A4000", "MI250X")]
    files.append(ROOT / "data/convolution2d/h100-cuda.json.gz")
    data = load_caches(files)
    names = ["A100", "A4000", "MI250X", "H100 (perfport's code)"]
    perf = relative(data.times)
    valid = np.isfinite(data.times).all(axis=0)
    print(f"configurations: {len(data.configs)}, valid on all four: {int(valid.sum())}")
    print("failed:", {n: int(np.isnan(data.times[i]).sum()) for i, n in enumerate(names)})
    print("best ms:", {n: round(float(np.nanmin(data.times[i])), 4) for i, n in enumerate(names)})
    rho = np.corrcoef(ranks(np.log(data.times[:, valid])))
    print("\nSpearman rank correlation of times over the configurations valid on all four")
    print("| | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
    for i, n in enumerate(names):
        print(f"| {n} | " + " | ".join(f"{rho[i, j]:.3f}" for j in range(len(names))) + " |")
    print("\nEach GPU's best configuration, as a fraction of every GPU's optimum")
    print("| best of | configuration | " + " | ".join(names) + " |")
    print("|---|---|" + "---:|" * len(names))
    for i, n in enumerate(names):
        b = int(np.nanargmax(perf[i]))
        config = ", ".join(f"{k}={v}" for k, v in data.config_dict(b).items())
        print(
            f"| {n} | {config} | "
            + " | ".join(f"{perf[j, b]:.3f}" for j in range(len(names)))
            + " |"
        )
    shmem = np.array([c[data.param_names.index("use_shmem")] for c in data.configs])
    print("\nBest fraction of the optimum without and with the input staged in shared memory")
    print("| GPU | use_shmem=0 | use_shmem=1 |\n|---|---:|---:|")
    for i, n in enumerate(names):
        off = np.nanmax(np.where(shmem == 0, perf[i], np.nan))
        on = np.nanmax(np.where(shmem == 1, perf[i], np.nan))
        print(f"| {n} | {off:.3f} | {on:.3f} |")


if __name__ == "__main__":
    main()
