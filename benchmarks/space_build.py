"""Search-space construction: perfport vs Kernel Tuner, on every T1 and BAT space file.

    pip install -e '.[pocl,bench]'
    python benchmarks/space_build.py [--data ../shared/data] [--repeats 3]

For each file, both tools build the legal configurations from the same parameters and
conditions: perfport with ``load_space_file(...).space()`` (vectorised on an open grid), Kernel
Tuner with ``kernel_tuner.searchspace.Searchspace`` (its default python-constraint2 solver; no
block-size limit, so only the file's conditions apply). Both counts are printed and must agree;
the time is the best of --repeats builds. Goal: perfport at least 10x faster on the largest space.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings
from functools import partial
from pathlib import Path

from perfport.store.formats.search_space import is_space_file, load_space_file


def best_time(build, repeats: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        count = build()
        times.append(time.perf_counter() - started)
    return min(times), count


def kt_build(tune_params: dict, conditions: list[str]) -> int:
    from kernel_tuner.searchspace import Searchspace

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return len(Searchspace(tune_params, conditions, 1 << 30).list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="seconds: the small spaces, once")
    args = parser.parse_args()
    has_kt = importlib.util.find_spec("kernel_tuner") is not None
    if not has_kt:
        print("kernel_tuner not importable (pip install 'perfport[bench]'): skipped its part")
    if args.smoke:
        args.repeats = 1
    files = sorted(f for f in args.data.rglob("*.json") if is_space_file(f))
    if args.smoke:  # the spaces of at most 10,000 points build in milliseconds
        files = [f for f in files if load_space_file(f).space().report.cartesian <= 10_000]
    print(
        f"{'space file':44} {'cartesian':>10} {'legal':>8} {'perfport s':>11} {'kernel_tuner s':>15} {'ratio':>7}"
    )
    rows = []
    for f in files:
        definition = load_space_file(f)
        tune_params = {p.name: list(p.values) for p in definition.params}
        ours_s, ours_n = best_time(lambda d=definition: len(d.space()), args.repeats)

        if not has_kt:
            print(f"{f.parent.name}/{f.name:44} {len(definition.space()):8d} {ours_s:11.4f}")
            continue
        kt_s, kt_n = best_time(
            partial(kt_build, tune_params, list(definition.constraints)), args.repeats
        )
        cartesian = definition.space().report.cartesian
        assert ours_n == kt_n, f"{f}: perfport {ours_n} configurations, Kernel Tuner {kt_n}"
        rows.append((cartesian, f, ours_s, kt_s))
        name = f"{f.parent.name}/{f.name}"
        print(
            f"{name:44} {cartesian:10d} {ours_n:8d} {ours_s:11.4f} {kt_s:15.4f} {kt_s / ours_s:6.1f}x"
        )
    if not rows:
        print("\nratio to Kernel Tuner: skipped (kernel_tuner not importable)")
        return
    cartesian, f, ours_s, kt_s = max(rows)
    print(
        f"\nlargest space ({f.name}, {cartesian} points): perfport {kt_s / ours_s:.0f}x faster than Kernel Tuner (target >= 10x)"
    )


if __name__ == "__main__":
    main()
