"""perfport vs Kernel Tuner: wall time for the same stencil configurations on PoCL.

    pip install -e '.[pocl,bench]'      # Kernel Tuner is a benchmark-only extra
    python benchmarks/overhead.py [--size 1024] [--rounds 3] [--iterations 7]

Both tools tune the built-in SkelCL-style stencil (4096-cell halo tiles in local memory, 1-cell
borders, float) over the same 25 work-group sizes (wc in 4..64, wr in 1..16), verify every
configuration against the same numpy answer once, then time it with the same number of
launches (Kernel Tuner's default of 7; perfport with ``Timing.fixed(7, warmup=0)``), on the
same PoCL device. Each round runs Kernel Tuner, then perfport with a fresh database (so
nothing is resumed), then perfport with the work-group size made a compile-time parameter
(one build per configuration, as Kernel Tuner does), and prints:

- wall(perfport) / wall(kernel_tuner) for each perfport variant;
- each tool's per-configuration overhead: (wall - kernel time of the timed launches) / configs.

Target: ratio <= 1.0 (perfport's worker process, per-result commits and checks cost nothing
that its shared builds do not pay back).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import perfport
from perfport import LocalArg, Param, ParamKind, RunSettings, Timing
from perfport.devices.dialect import OPENCL_PRELUDE
from perfport.kernels.stencil import box_mean_numpy, shifted_views

WC = (4, 8, 16, 32, 64)
WR = (1, 2, 4, 8, 16)


def stencil_spec(compile_time: bool) -> perfport.KernelSpec:
    spec = perfport.builtin("stencil")
    if not compile_time:
        return dataclasses.replace(
            spec, params=(Param("wc", WC, ParamKind.LAUNCH), Param("wr", WR, ParamKind.LAUNCH))
        )

    # Compile-time parameters become -D defines: upper-case names keep them clear of the
    # source's own 'wc'/'wr' variables.
    def up(text: str) -> str:
        return text.replace("wc", "WC").replace("wr", "WR")

    return dataclasses.replace(
        spec,
        params=(Param("WC", WC), Param("WR", WR)),
        global_size=tuple(up(t) for t in spec.global_size),
        local_size=tuple(up(t) for t in spec.local_size),
        args=tuple(
            dataclasses.replace(a, count=up(a.count)) if isinstance(a, LocalArg) else a
            for a in spec.args
        ),
        default={"WC": 32, "WR": 4},
    )


def kernel_tuner_source(spec: perfport.KernelSpec) -> str:
    # Kernel Tuner's OpenCL backend passes no __local arguments: the halo tile becomes a static
    # array sized by the block-size defines it inserts. The computation is the same.
    static_tile = (
        "#undef LOCAL_PARAM\n#define LOCAL_PARAM(T, name)\n#undef LOCAL_DECL\n"
        "#define LOCAL_DECL(T, name) __local T name[(block_size_x + 2) * (block_size_y + 2)];\n"
    )
    defines = "#define ELEM float\n#define NORTH 1\n#define SOUTH 1\n#define EAST 1\n#define WEST 1\n#define NEAREST 1\n#define PAD 0\n"
    source = spec.source.replace("LOCAL_PARAM(ELEM, tile)", "")  # Kernel Tuner counts parameters
    return defines + OPENCL_PRELUDE + static_tile + source


def run_kernel_tuner(
    size: int, iterations: int, data: np.ndarray, answer: np.ndarray
) -> tuple[float, float, int]:
    import kernel_tuner

    spec = stencil_spec(False)
    args = [data, np.zeros_like(data), np.int32(size), np.int32(size)]
    start = time.perf_counter()
    results, _ = kernel_tuner.tune_kernel(
        "stencil",
        kernel_tuner_source(spec),
        (size, size),
        args,
        {"block_size_x": list(WC), "block_size_y": list(WR)},
        lang="OpenCL",
        iterations=iterations,
        answer=[None, answer, None, None],
        atol=1e-5,
        strategy="brute_force",
        verbose=False,
        quiet=True,
    )
    wall = time.perf_counter() - start
    kernel_s = sum(sum(r["times"]) for r in results) / 1000.0
    return wall, kernel_s, len(results)


def run_perfport(size: int, iterations: int, compile_time: bool) -> tuple[float, float, int]:
    settings = RunSettings(timing=Timing.fixed(iterations, warmup=0))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = perfport.tune(
            stencil_spec(compile_time),
            problem={"width": size, "height": size},
            strategy="brute_force",
            db=Path(tmp) / "overhead.db",
            settings=settings,
        )
        wall = time.perf_counter() - start
    assert result.outcomes["ok"] == len(WC) * len(WR), result.outcomes
    kernel_s = sum(sum(m.times_ms) for m in result.measurements) / 1000.0
    return wall, kernel_s, len(result.measurements)


def main() -> None:
    parser = argparse.ArgumentParser(description="perfport vs Kernel Tuner overhead on PoCL")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=7)
    args = parser.parse_args()
    spec = stencil_spec(False)
    problem = spec.problem.merged({"width": args.size, "height": args.size})
    # The same input perfport generates for seed 0, so both tools check the same answer.
    from perfport.measure.data import host_arrays

    data = host_arrays(spec, spec.env({}, problem), seed=0)["input"]
    answer = box_mean_numpy(shifted_views(data, problem), problem).astype(np.float32)

    device = perfport.get_device()
    print(f"device: {device.name} ({device.id}), stencil {args.size}x{args.size} float, "
          f"{len(WC) * len(WR)} configurations, {args.iterations} timed launches each + 1 verification launch")  # fmt: skip
    print(
        f"{'round':>5} {'tool':<28} {'wall s':>8} {'kernel s':>9} {'overhead ms/config':>19} {'ratio':>6}"
    )
    ratios: dict[str, list[float]] = {"launch": [], "compile": []}
    for r in range(1, args.rounds + 1):
        kt_wall, kt_kernel, n = run_kernel_tuner(args.size, args.iterations, data, answer)
        print(
            f"{r:>5} {'kernel_tuner':<28} {kt_wall:8.2f} {kt_kernel:9.3f} {(kt_wall - kt_kernel) / n * 1000:19.1f}"
        )
        for variant, compile_time in (("launch", False), ("compile", True)):
            wall, kernel_s, n = run_perfport(args.size, args.iterations, compile_time)
            ratio = wall / kt_wall
            ratios[variant].append(ratio)
            label = f"perfport (wg {variant}-time)"
            print(
                f"{r:>5} {label:<28} {wall:8.2f} {kernel_s:9.3f} {(wall - kernel_s) / n * 1000:19.1f} {ratio:6.2f}"
            )
    for variant, values in ratios.items():
        print(
            f"wall(perfport, wg {variant}-time) / wall(kernel_tuner): median {statistics.median(values):.2f} over {len(values)} rounds"
        )


if __name__ == "__main__":
    main()
