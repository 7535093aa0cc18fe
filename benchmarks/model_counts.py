"""Symbolic kernel statistics: counting once (loopy) against evaluating at a new size.

    pip install -e '.[pocl,model]'
    python benchmarks/model_counts.py [--sizes 64] [--smoke] [--json]

Goal (issue 24): symbolic counts evaluated at a new size in under 1 ms. For each built-in
application kernel (``perfport.model.APPLICATIONS``) the script gathers the statistics once
with loopy (timed: the cost a cache saves), then evaluates them at --sizes sizes never asked
before: every count of the kernel (``KernelStats.evaluate``), and every count plus the input
features of the paper's matmul model (section 6.1.4's eight features). Prints the median and
maximum microseconds of each, and the ratio of counting to one evaluation. Timings on a busy
machine are upper bounds; rerun to compare.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings

from perfport.model import APPLICATIONS, FeatureSet, gather

FEATURES = (
    "f_op_float32_madd",
    "f_mem_access_local_float32",
    "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:0}_afr:>1",
    "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:16}_afr:>1",
    "f_mem_access_global_float32_store",
    "f_sync_barrier_local",
    "f_thread_groups",
    "f_sync_kernel_launch",
)


def _us(seconds: list[float]) -> dict[str, float]:
    return {"median_us": statistics.median(seconds) * 1e6, "max_us": max(seconds) * 1e6}


def measure(sizes: int) -> list[dict[str, object]]:
    results = []
    features = FeatureSet()
    for name, app in APPLICATIONS.items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # loopy's notes are kept in stats.approximations
            stats = gather(app.make())
        count_s = time.perf_counter() - start
        counts, with_features = [], []
        for i in range(sizes):
            # Sizes not evaluated before, multiples of 224 as every kernel's assumptions ask
            # (16 for the matmul, 14 and 16 for FD's tiles), given to each size parameter
            # (n for the matmul and FD, nelements for DG).
            n = 224 * (i + 5)
            start = time.perf_counter()
            stats.evaluate(dict.fromkeys(stats.params, n))
            counts.append(time.perf_counter() - start)
            start = time.perf_counter()
            features.values(FEATURES, stats.evaluate(dict.fromkeys(stats.params, n + 224 * sizes)))
            with_features.append(time.perf_counter() - start)
        results.append(
            {
                "kernel": name,
                "count_s": count_s,
                "evaluate": _us(counts),
                "evaluate_and_features": _us(with_features),
                "ratio_count_to_evaluation": count_s / statistics.median(counts),
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, default=64, help="new sizes per kernel")
    parser.add_argument("--smoke", action="store_true", help="a few sizes: seconds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = measure(4 if args.smoke else args.sizes)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print("| kernel | counting (s) | evaluate median / max (us) | + features median / max (us) |")
    print("|---|---|---|---|")
    for r in results:
        e, f = r["evaluate"], r["evaluate_and_features"]
        assert isinstance(e, dict) and isinstance(f, dict)
        print(
            f"| {r['kernel']} | {r['count_s']:.2f} | {e['median_us']:.0f} / {e['max_us']:.0f} "
            f"| {f['median_us']:.0f} / {f['max_us']:.0f} |"
        )
    worst = max(float(r["evaluate_and_features"]["median_us"]) for r in results)  # type: ignore[index]
    print(f"goal: evaluation at a new size under 1000 us; worst median {worst:.0f} us")
    for r in results:
        print(f"ratio counting / evaluation {r['kernel']}: {r['ratio_count_to_evaluation']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
