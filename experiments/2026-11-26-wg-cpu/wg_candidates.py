"""How much of the fastest size a candidate set of K work-group sizes keeps on CPUs (issue 31,
item 3). Under a second.

    python experiments/2026-11-26-wg-cpu/wg_candidates.py [--json]

``gpu_host_collect.sh`` measures each scenario at the K sizes of ``covering_sizes`` (chosen on
the shipped dataset's CPU scenarios) and w(32x4) instead of all 229. For K = 8 ... 48 this
prints what the best of the K reaches of each CPU scenario's fastest time (geometric mean):
in-sample (chosen on all CPU scenarios) and for unseen kernels (chosen without the kernel's
scenarios, scored on them), against the shipped 8-round (16-core) and one-round (2-core) medians.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from perfport.wg import dataset_path, load_dataset
from perfport.wg.predictors.vectors import covering_sizes, performance_vectors

COUNTS = (8, 16, 24, 32, 48)


def coverage(vectors: np.ndarray, chosen: list[int], rows: np.ndarray) -> np.ndarray:
    """Per scenario of ``rows``: the best chosen size's time relative to the fastest."""
    return np.exp(np.nanmax(vectors[rows][:, chosen], axis=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    data = load_dataset(dataset_path(None))
    vectors = performance_vectors(data)
    cpu = data.features[:, data.feature_names.index("device_is_cpu")] == 1
    out = []
    for k in COUNTS:
        seen = coverage(vectors, covering_sizes(vectors, cpu, k), cpu)
        unseen = np.concatenate([
            coverage(vectors, covering_sizes(vectors, cpu & (data.kernel != kernel), k),
                     cpu & (data.kernel == kernel))
            for kernel in sorted(set(data.kernel[cpu].tolist()))
        ])  # fmt: skip
        out.append({"sizes": k, "scenarios": int(cpu.sum()),
                    "in_sample": float(np.exp(np.log(seen).mean())),
                    "unseen_kernel": float(np.exp(np.log(unseen).mean())),
                    "unseen_kernel_worst": float(unseen.min())})  # fmt: skip
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for r in out:
        print(f"{r['sizes']:3d} sizes: in-sample {r['in_sample']:.1%}, unseen kernel "
              f"{r['unseen_kernel']:.1%} (worst {r['unseen_kernel_worst']:.0%})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
