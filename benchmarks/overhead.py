"""perfport vs Kernel Tuner: per-configuration overhead on the same stencil source, on PoCL.

    pip install -e '.[pocl,bench]'      # Kernel Tuner is a benchmark-only extra
    python benchmarks/overhead.py [--size 1024] [--rounds 3] [--iterations 7]
    python benchmarks/overhead.py --smoke   # seconds: 4 configurations, 256 x 256, 1 round

Like for like:
- One kernel source for both tools: the built-in box stencil (1-cell borders, float) in plain
  OpenCL C with a static local tile sized by the ``block_size_x`` / ``block_size_y`` defines,
  so each tool compiles one program per configuration and the kernels are identical.
- Kernel Tuner's reference stencil space: block_size_x in 32..256 step 32, block_size_y in
  1..32 powers of two (48 configurations; the few over the device's work-group limit are
  skipped by Kernel Tuner and pruned by perfport).
- Each configuration verified once against the same numpy answer, then timed with the same
  number of launches (``--iterations``; perfport with ``Timing.fixed(n, warmup=0)``).
- Cold and warm compile caches: each (tool, round) runs in a fresh process with its own PoCL
  and pyopencl cache folders, first empty (cold), then again on what the first run left (warm).
- Warm-up outside the measurement: before its timed run each process imports the tool and
  runs one configuration outside the space (16 x 1); Kernel Tuner also re-runs the first
  configuration of every tuning call to warm the device, which is timed and subtracted.

Prints, per cache state, wall(perfport) / wall(Kernel Tuner) and each tool's overhead per
configuration, (wall - kernel time of the timed launches) / configurations, side by side.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

BLOCK_X = tuple(32 * i for i in range(1, 9))
BLOCK_Y = tuple(2**i for i in range(6))
SMOKE_X = (32, 64)
SMOKE_Y = (1, 2)
WARMUP = {"block_size_x": [16], "block_size_y": [1]}  # outside both spaces
TOOLS = ("kernel_tuner", "perfport")


@dataclasses.dataclass(frozen=True)
class Run:
    """One timed tuning run of one tool, as the child process reports it."""

    tool: str
    wall_s: float  # the tuning call, less Kernel Tuner's own warm-up of its first configuration
    kernel_s: float  # the timed launches
    configs: int  # configurations measured

    @property
    def overhead_ms(self) -> float:
        return (self.wall_s - self.kernel_s) / max(self.configs, 1) * 1000


def shared_source() -> str:
    """The built-in stencil as plain OpenCL C with a static tile: the one source both tools
    compile. Its problem defines (types, borders, boundary) come first, as the tool adds
    block_size_x and block_size_y."""
    import perfport
    from perfport.devices.dialect import OPENCL_PRELUDE

    spec = perfport.builtin("stencil")
    defines = {"ELEM": "float", "OUT": "float", "NORTH": 1, "SOUTH": 1, "EAST": 1, "WEST": 1}
    head = "".join(f"#define {k} {v}\n" for k, v in {**defines, "NEAREST": 1, "PAD": 0}.items())
    static_tile = (
        "#undef LOCAL_PARAM\n#define LOCAL_PARAM(T, name)\n#undef LOCAL_DECL\n"
        "#define LOCAL_DECL(T, name) __local T name"
        "[(block_size_x + WEST + EAST) * (block_size_y + NORTH + SOUTH)];\n"
    )
    # Kernel Tuner matches arguments to the signature's parameters: drop the empty macro there.
    body = spec.source.replace("LOCAL_PARAM(ELEM, tile)", "")
    return head + OPENCL_PRELUDE + static_tile + body


def perfport_spec(space: dict[str, Sequence[int]]) -> Any:
    """The shared source as a perfport spec: the built-in's problem and numpy reference, the
    block sizes compile-time parameters, no local-memory argument."""
    import perfport
    from perfport import Language, Param

    spec = perfport.builtin("stencil")
    return dataclasses.replace(
        spec,
        source=shared_source(),
        language=Language.OPENCL,
        params=tuple(Param(name, tuple(values)) for name, values in space.items()),
        global_size=("round_up(width, block_size_x)", "round_up(height, block_size_y)"),
        local_size=("block_size_x", "block_size_y"),
        args=spec.args[:4],  # input, output, width, height: the tile is static now
        defines=(),
        default={name: values[0] for name, values in space.items()},
    )


def stencil_inputs(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The input perfport generates for seed 0 and its numpy answer, so both tools check the
    same output."""
    import perfport
    from perfport.kernels.stencil import box_mean_numpy, shifted_views
    from perfport.measure.data import host_arrays

    spec = perfport.builtin("stencil")
    problem = spec.problem.merged({"width": size, "height": size})
    data = host_arrays(spec, spec.env({}, problem), seed=0)["input"]
    return data, box_mean_numpy(shifted_views(data, problem), problem).astype(np.float32)


def run_kernel_tuner(space: dict[str, Sequence[int]], size: int, iterations: int) -> Run:
    import kernel_tuner
    from kernel_tuner.core import DeviceInterface

    data, answer = stencil_inputs(size)
    source = shared_source()

    def tune(params: dict[str, Sequence[int]]) -> list[dict[str, Any]]:
        args = [data, np.zeros_like(data), np.int32(size), np.int32(size)]
        results, _ = kernel_tuner.tune_kernel(
            "stencil", source, (size, size), args, {k: list(v) for k, v in params.items()},
            lang="OpenCL", iterations=iterations, answer=[None, answer, None, None], atol=1e-5,
            strategy="brute_force", verbose=False, quiet=True,
        )  # fmt: skip
        return results

    tune(WARMUP)
    # Kernel Tuner warms the device by running the first configuration once more inside every
    # tuning call; time each compile-and-benchmark so that repeat can be taken out.
    calls: list[float] = []
    original = DeviceInterface.compile_and_benchmark

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            calls.append(time.perf_counter() - start)

    DeviceInterface.compile_and_benchmark = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    results = tune(space)
    wall = time.perf_counter() - start
    DeviceInterface.compile_and_benchmark = original  # type: ignore[method-assign]
    measured = [r for r in results if "times" in r]
    warmup = calls[0] if len(calls) == len(results) + 1 else 0.0
    kernel_s = sum(sum(r["times"]) for r in measured) / 1000.0
    return Run("kernel_tuner", wall - warmup, kernel_s, len(measured))


def run_perfport(space: dict[str, Sequence[int]], size: int, iterations: int) -> Run:
    import perfport
    from perfport import RunSettings, Timing

    settings = RunSettings(timing=Timing.fixed(iterations, warmup=0))
    with tempfile.TemporaryDirectory() as tmp:

        def tune(params: dict[str, Sequence[int]], db: str) -> Any:
            return perfport.tune(
                perfport_spec(params), problem={"width": size, "height": size},
                strategy="brute_force", db=Path(tmp) / db, settings=settings,
            )  # fmt: skip

        tune(WARMUP, "warmup.db")
        start = time.perf_counter()
        result = tune(space, "overhead.db")
        wall = time.perf_counter() - start
    ok = [m for m in result.measurements if m.times_ms]
    kernel_s = sum(sum(m.times_ms) for m in ok) / 1000.0
    return Run("perfport", wall, kernel_s, len(ok))


def child(args: argparse.Namespace) -> None:
    """One timed run in this fresh process; the last stdout line is its JSON record."""
    space = smoke_space() if args.smoke else full_space()
    runner = run_kernel_tuner if args.child == "kernel_tuner" else run_perfport
    run = runner(space, args.size, args.iterations)
    print(json.dumps(dataclasses.asdict(run)))


def full_space() -> dict[str, Sequence[int]]:
    return {"block_size_x": BLOCK_X, "block_size_y": BLOCK_Y}


def smoke_space() -> dict[str, Sequence[int]]:
    return {"block_size_x": SMOKE_X, "block_size_y": SMOKE_Y}


def spawn(tool: str, cache: Path, args: argparse.Namespace) -> Run:
    """The tool's timed run in a fresh process whose PoCL and pyopencl caches live in
    ``cache`` (empty: a cold run; left by an earlier run: a warm one)."""
    env = {**os.environ, "POCL_CACHE_DIR": str(cache / "pocl"), "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, __file__, "--child", tool, "--size", str(args.size),
               "--iterations", str(args.iterations), *(["--smoke"] if args.smoke else [])]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tool} run failed:\n{done.stdout}{done.stderr}")
    return Run(**json.loads(done.stdout.strip().splitlines()[-1]))


def measure(args: argparse.Namespace, tools: Sequence[str]) -> dict[str, dict[str, list[Run]]]:
    """runs[cache state][tool], one per round, printed as they come."""
    runs: dict[str, dict[str, list[Run]]] = {s: {t: [] for t in tools} for s in ("cold", "warm")}
    print(f"{'round':>5} {'cache':<5} {'tool':<13} {'wall s':>7} {'kernel s':>8} "
          f"{'configs':>7} {'overhead ms/config':>18}")  # fmt: skip
    for r in range(1, args.rounds + 1):
        for tool in tools:
            with tempfile.TemporaryDirectory() as cache:
                for state in ("cold", "warm"):
                    run = spawn(tool, Path(cache), args)
                    runs[state][tool].append(run)
                    print(f"{r:>5} {state:<5} {tool:<13} {run.wall_s:7.2f} {run.kernel_s:8.3f} "
                          f"{run.configs:>7} {run.overhead_ms:18.1f}")  # fmt: skip
    return runs


def summarise(runs: dict[str, dict[str, list[Run]]]) -> None:
    """The ratios of one run side by side: wall time, and overhead per configuration."""
    for state, by_tool in runs.items():
        pp, kt = by_tool["perfport"], by_tool.get("kernel_tuner")
        pp_over = statistics.median(r.overhead_ms for r in pp)
        if not kt:
            print(f"ratio {state} caches: skipped (kernel_tuner not importable); "
                  f"perfport overhead {pp_over:.1f} ms/config")  # fmt: skip
            continue
        wall = statistics.median(p.wall_s / k.wall_s for p, k in zip(pp, kt, strict=True))
        over = statistics.median(p.overhead_ms / k.overhead_ms for p, k in zip(pp, kt, strict=True))
        kt_over = statistics.median(r.overhead_ms for r in kt)
        print(f"ratio {state} caches: wall(perfport) / wall(kernel_tuner) {wall:.2f}, "
              f"overhead per configuration {over:.2f}, each the median of {len(pp)} rounds' "
              f"ratios (the medians themselves: {pp_over:.1f} and {kt_over:.1f} ms)")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="perfport vs Kernel Tuner overhead on PoCL")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="seconds: 4 configurations, 256^2")
    parser.add_argument("--child", choices=TOOLS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke and args.child is None:
        args.size, args.rounds, args.iterations = 256, 1, 1
    if args.child:
        child(args)
        return
    tools = [t for t in TOOLS if t != "kernel_tuner" or importlib.util.find_spec(t)]
    if "kernel_tuner" not in tools:
        print("kernel_tuner not importable (pip install 'perfport[bench]'): skipped its part")
    import perfport

    device = perfport.get_device()
    space = smoke_space() if args.smoke else full_space()
    n = len(space["block_size_x"]) * len(space["block_size_y"])
    print(f"device: {device.name} ({device.id}), stencil {args.size}x{args.size} float, one "
          f"OpenCL source, {n} configurations, {args.iterations} timed launches each + 1 "
          f"verification launch")  # fmt: skip
    summarise(measure(args, tools))


if __name__ == "__main__":
    main()
