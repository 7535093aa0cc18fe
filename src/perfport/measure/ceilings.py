"""A device's practical ceilings: copy, streaming read and write bandwidth, fp32 and fp64
FMA throughput, each a configuration of one portable micro-benchmark kernel measured by the
ordinary Runner (worker process, device-event timing), so they compare with tuned results.

Sizes follow the device: arrays of 4 MiB per compute unit (between 32 and 512 MiB, at most an
eighth of global memory) saturate a GPU's memory system yet take milliseconds on PoCL; the
FMA benchmark runs 2048 work-items per compute unit, 8 independent chains each. The copy is
also timed on a ladder of smaller prefixes of the same arrays (1 MiB, 4 MiB, ... powers of 4
below the large size): a kernel on a 64 MiB problem pays a launch's fixed cost and a tail
that a 512 MiB copy hides, and is fairly compared with a copy of its own bytes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from perfport._core import (
    ArrayArg,
    Config,
    DeviceInfo,
    DeviceType,
    Init,
    KernelSpec,
    Language,
    Param,
    ParamKind,
    Problem,
    ScalarArg,
)
from perfport._core.metrics import Ceilings
from perfport.measure.runner import Runner
from perfport.measure.settings import RunSettings, Timing

OPS = ("copy", "read", "write", "fp32", "fp64")  # the value of ``op`` is the index
_CHAINS = 8  # independent FMA chains per work-item: enough to hide the FMA latency
_ITERS = 512
_MIB = 1 << 20

_SOURCE = r"""
#ifdef __CUDACC__
#define FMA(a, b, c) fma(a, b, c)
#else
#define FMA(a, b, c) ((a) * (b) + (c))  /* contracted to an FMA where the device has one */
#endif
#if OP == 4
typedef double REAL;
#else
typedef float REAL;
#endif
#ifdef __CUDACC__
#define SPLAT4(x) make_float4(x, x, x, x)
#else
#define SPLAT4(x) ((float4)(x))
#endif
KERNEL void ceiling(GLOBAL const float* a, GLOBAL float* b, int n, float m) {
    const int i = GID(0);
#if OP < 3 && VEC == 4  /* 16-byte accesses: what a copy at full bandwidth takes */
    GLOBAL const float4* a4 = (GLOBAL const float4*)a;
    GLOBAL float4* b4 = (GLOBAL float4*)b;
#if OP == 0
    b4[i] = a4[i];
#elif OP == 1
    const float4 v = a4[i];
    if (v.x + v.y + v.z + v.w == -1.0f) b[0] = v.x;  /* never true for zeros */
#else
    b4[i] = SPLAT4(m);
#endif
#elif OP == 0
    b[i] = a[i];
#elif OP == 1
    const float v = a[i];
    if (v == -1.0f) b[0] = v;  /* never true for zeros, but keeps the load */
#elif OP == 2
    b[i] = m;
#else
    REAL x0 = (REAL)i, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
    REAL x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    const REAL mm = (REAL)m, c = (REAL)1e-3f;
    for (int k = 0; k < ITERS; ++k) {
        x0 = FMA(x0, mm, c); x1 = FMA(x1, mm, c); x2 = FMA(x2, mm, c); x3 = FMA(x3, mm, c);
        x4 = FMA(x4, mm, c); x5 = FMA(x5, mm, c); x6 = FMA(x6, mm, c); x7 = FMA(x7, mm, c);
    }
    b[i] = (float)(x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7);
#endif
}
"""


@dataclass(frozen=True)
class CeilingRun:
    """One benchmark's result: its rate (GB/s or GFLOP/s; None where it failed)."""

    op: str
    rate: float | None
    time_ms: float | None
    work: float  # bytes or flops per launch
    outcome: str
    message: str
    vec: int = 1  # floats per access
    count: int = 0  # floats copied by a run of the size ladder; 0: the whole (large) array

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op, "vec": self.vec, "rate": self.rate, "time_ms": self.time_ms,
            "work": self.work, "outcome": self.outcome, "message": self.message,
            "count": self.count,
        }  # fmt: skip


def ceiling_problem(device: DeviceInfo) -> Problem:
    """Element count of the bandwidth arrays and work-items of the FMA runs, by device."""
    array_bytes = min(max(4 * _MIB * device.compute_units, 32 * _MIB), 512 * _MIB)
    if device.global_mem_bytes:
        array_bytes = min(array_bytes, device.global_mem_bytes // 8)
    block = 4 * _wg(device)  # n // 4 (16-byte accesses) stays a multiple of the work-group
    n = max(array_bytes // 4 // block * block, block)
    wg = _wg(device)
    lanes = max(2048 * device.compute_units // wg * wg, wg)
    return Problem.of(n=int(n), lanes=int(lanes), iters=_ITERS)


def copy_ladder(device: DeviceInfo, n: int) -> tuple[int, ...]:
    """Float counts of the smaller copies: 1 MiB per array, then powers of 4, below ``n``
    floats; each a multiple of 4 work-groups (16-byte accesses fill whole work-groups)."""
    block = 4 * _wg(device)
    counts, size = [], _MIB
    while size // 4 < n:
        count = size // 4 // block * block
        if count >= block:
            counts.append(count)
        size *= 4
    return tuple(counts)


def _wg(device: DeviceInfo) -> int:
    return max(1, min(256, device.max_work_group_size, device.max_work_item_sizes[0]))


def ceiling_spec(device: DeviceInfo) -> KernelSpec:
    """The micro-benchmark as a kernel spec: ``op`` selects the benchmark (one build each);
    ``count`` (a launch parameter: no rebuild) copies only a prefix of the arrays."""
    ladder = copy_ladder(device, int(ceiling_problem(device)["n"]))
    return KernelSpec(
        name="perfport_ceilings",
        source=_SOURCE,
        entry="ceiling",
        language=Language.PORTABLE,
        params=(
            Param("op", tuple(range(len(OPS))), define="OP"),
            Param("vec", (1, 4), define="VEC"),
            Param("wg", (_wg(device),), ParamKind.LAUNCH),
            Param("count", (0, *ladder), ParamKind.LAUNCH),
        ),
        global_size=("(count if count else n) // vec if op < 3 else lanes",),
        restrictions=("op < 3 or vec == 1", "count == 0 or op == 0"),
        local_size=("wg",),
        args=(
            ArrayArg("a", "float", ("n",), init=Init.ZEROS),
            ArrayArg("b", "float", ("n",), init=Init.ZEROS, output=True),
            ScalarArg("n", "int", "n"),
            ScalarArg("m", "float", "0.999"),
        ),
        problem=Problem.of(n=1 << 20, lanes=4096, iters=_ITERS),
        defines=(("ITERS", "iters"),),
        doc="device ceilings: copy, read, write bandwidth; fp32 and fp64 FMA throughput",
    )


def _work(op: str, p: Problem) -> float:
    """Bytes moved (copy reads and writes) or flops done (2 per FMA) in one launch."""
    n, lanes, iters = int(p["n"]), int(p["lanes"]), int(p["iters"])
    return {
        "copy": 8.0 * n,
        "read": 4.0 * n,
        "write": 4.0 * n,
    }.get(op, 2.0 * _CHAINS * iters * lanes)


def measure_ceilings(
    device: DeviceInfo, on_each: Callable[[CeilingRun], None] | None = None
) -> tuple[Ceilings | None, list[CeilingRun]]:
    """Run the five benchmarks and the copy's size ladder; the Ceilings (None unless copy,
    read, write and fp32 all ran) and every run. ``on_each`` is called as each finishes."""
    spec, problem = ceiling_spec(device), ceiling_problem(device)
    # A CPU's timings are noisier and its launches longer: a few more samples, less target.
    timing = Timing(warmup=1, min_repeats=5, max_repeats=100, target_s=0.05)
    settings = RunSettings(verify=False, timing=timing)
    runs: list[CeilingRun] = []

    def run(runner: Runner, op: str, vec: int, count: int = 0) -> CeilingRun:
        config = {"op": OPS.index(op), "vec": vec, "wg": _wg(device), "count": count}
        m = runner.measure(Config.of(config))
        work = 8.0 * count if count else _work(op, problem)
        rate = work / m.time_ms / 1e6 if m.ok and m.time_ms else None
        out = CeilingRun(op, rate, m.time_ms, work, m.outcome.value, m.message[:200], vec, count)
        runs.append(out)
        if on_each is not None:
            on_each(out)
        return out

    with Runner(spec, problem, device, settings) as runner:
        for op in OPS:
            # Bandwidth with 4- and 16-byte accesses, the better kept: some devices reach
            # their bandwidth only with wide loads.
            for vec in (1, 4) if op in ("copy", "read", "write") else (1,):
                run(runner, op, vec)
            if op == "copy":  # the ladder with the access width that copied faster
                best = max((r for r in runs if r.op == "copy"), key=lambda r: r.rate or 0.0)
                for count in copy_ladder(device, int(problem["n"])):
                    run(runner, "copy", best.vec, count)
    return _ceilings(device, runs), runs


def _ceilings(device: DeviceInfo, runs: list[CeilingRun]) -> Ceilings | None:
    rates: dict[str, float | None] = {}
    for r in runs:
        if r.count:
            continue  # the ladder gives the curve, never the (large-array) ceiling
        if r.rate is not None and (rates.get(r.op) or 0.0) < r.rate:
            rates[r.op] = r.rate
        rates.setdefault(r.op, None)
    needed = [rates[k] for k in ("copy", "read", "write", "fp32")]
    if any(r is None for r in needed):
        return None
    copy, read, write, fp32 = (float(r or 0.0) for r in needed)
    large = max(r.work for r in runs if r.op == "copy" and not r.count)
    # A ladder step that failed is left out of the curve, which still ends at the ceiling.
    curve = sorted({(r.work, r.rate) for r in runs if r.count and r.rate} | {(large, copy)})
    return Ceilings(
        device.fingerprint, copy, read, write, fp32, rates["fp64"], measured=time.time(),
        copy_curve=tuple((float(b), float(g)) for b, g in curve),
    )  # fmt: skip


def nominal(device: DeviceInfo, clock_mhz: int | None, fp32_lanes: int | None) -> dict[str, Any]:
    """What the driver's figures imply, and how; "unknown" where it does not report enough.
    OpenCL reports compute units and the max clock but neither memory bus width nor lanes
    per compute unit on a GPU; a CPU's native float vector width gives its lanes per core."""
    out: dict[str, Any] = {"compute_units": device.compute_units, "max_clock_MHz": clock_mhz}
    if clock_mhz and fp32_lanes and device.type is DeviceType.CPU:
        out["fp32_GFLOPs"] = 2.0 * device.compute_units * clock_mhz * fp32_lanes / 1e3
        out["fp32_how"] = (
            f"2 (FMA) x {device.compute_units} compute units x {clock_mhz} MHz x {fp32_lanes} "
            "native float lanes (one FMA unit per core; many cores have two)"
        )
    else:
        out["fp32_GFLOPs"] = None
        out["fp32_how"] = "unknown: the driver does not report lanes per compute unit"
    out["bandwidth_GBps"] = None
    out["bandwidth_how"] = "unknown: the driver reports no memory clock or bus width"
    return out
