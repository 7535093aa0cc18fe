"""Latency of the work-group-size prediction daemon on loopback.

    pip install -e '.[pocl,features,serve]'
    python benchmarks/daemon_latency.py [--model MODEL] [--requests 2000] [--first-time 5] [--json]

Goal: "The daemon answers /v1/wg/predict in under 5 ms at p99 on loopback".

The script starts ``python -m perfport serve [--model MODEL] --db TMPDB --port FREE_PORT`` on
127.0.0.1 as a subprocess, waits for ``GET /v1/health``, warms up (see below), reports one
refused size (as a launcher would, so the database exists and every prediction pays its SQLite
look-up of refused sizes), then sends --requests sequential ``POST /v1/wg/predict`` requests over one
persistent HTTP/1.1 connection (``http.client``, so no client library is measured), each
followed by a ``GET /v1/health`` on the same connection: the health round trip is the baseline
(HTTP, uvicorn, FastAPI and JSON with no prediction). Each round trip is timed with
``time.perf_counter`` from sending the request to having read the whole response body.

Requests rotate, in a seeded random order, over the built-in stencils of Cummins et al.
(sobel, heat, gol, nms, threshold, gaussian with three radii, synthetic) and a stencil sent as
a description (the client's own kernel, compiled by the daemon), four data sizes and
the three devices of docs/results/2026-11-22-h100-builtins/devices.json (H100 via OpenCL and
via CUDA, a PoCL CPU). The daemon caches the kernel features (instruction counts of the
kernel compiled with PoCL) per kernel source and compile-time defines, in process
(``perfport.features.ir.instruction_classes``); data sizes are not defines, so a kernel is
compiled once whatever its size. That cache is legitimate, since a launcher asks about the same
kernels again and again, so the warm-up first sends every scenario once (their round trips are
reported as "cold", the first request of each kernel paying a compile) and the timed requests
measure the steady state. The daemon also remembers its answers, keyed by the request and the
refused sizes in the store (read on every request), since a launcher asks the same question at
every launch: the timed loop measures those repeated questions, and separate passes of
first-time questions (--first-time rounds, each scenario at data sizes not asked before:
features cached, the legal sizes computed and the model run, after the refusal below so the
SQLite look-up is paid too) measure an answer the daemon has to compute.

Prints p50, p90, p99 and max of both round trips, their p99 ratio, the ``predict_ms`` the
daemon reports (features + legal sizes + model, timed inside ``predict_wg``), and the verdict
line "p99 predict X ms: target < 5 ms met/not met". Client and server share the machine's cores
(the header says how many, and the load average), so on a small or busy machine the numbers
are an upper bound.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import FrameType
from typing import Any

TARGET_MS = 5.0
HOST = "127.0.0.1"

# The devices perfport found on the H100 machine (docs/results/2026-11-22-h100-builtins).
DEVICES: tuple[dict[str, Any], ...] = (
    {
        "name": "NVIDIA H100 80GB HBM3",
        "vendor": "NVIDIA Corporation",
        "type": "gpu",
        "backend": "opencl",
        "driver": "580.159.04",
        "platform": "NVIDIA CUDA OpenCL 3.0 CUDA 13.0.98",
        "version": "OpenCL 3.0 CUDA",
        "compute_units": 132,
        "max_work_group_size": 1024,
        "max_work_item_sizes": [1024, 1024, 64],
        "local_mem_bytes": 49152,
        "global_mem_bytes": 85017493504,
        "subgroup_size": 32,
    },
    {
        "name": "NVIDIA H100 80GB HBM3",
        "vendor": "NVIDIA",
        "type": "gpu",
        "backend": "cuda",
        "driver": "CUDA driver 13.0",
        "platform": "CUDA runtime 13020",
        "version": "sm_90",
        "compute_units": 132,
        "max_work_group_size": 1024,
        "max_work_item_sizes": [1024, 1024, 64],
        "local_mem_bytes": 49152,
        "global_mem_bytes": 85017493504,
        "subgroup_size": 32,
    },
    {
        "name": "cpu-skylake-avx512-Intel(R) Xeon(R) Processor",
        "vendor": "GenuineIntel",
        "type": "cpu",
        "backend": "opencl",
        "driver": "5.0+debian",
        "platform": "Portable Computing Language OpenCL 3.0 PoCL 5.0+debian",
        "version": "OpenCL 3.0 PoCL HSTR: cpu-x86_64-pc-linux-gnu-skylake-avx512",
        "compute_units": 16,
        "max_work_group_size": 4096,
        "max_work_item_sizes": [4096, 4096, 4096],
        "local_mem_bytes": 2097152,
        "global_mem_bytes": 3997814784,
        "subgroup_size": None,
    },
)

# A client's own stencil, sent as a description (docs/wg.md, "Your own stencils").
CROSS = {
    "name": "cross",
    "body": "return (OUT)(GET(0, -2) + GET(0, 2) + GET(-3, 0) + GET(3, 0));",
    "north": 2, "south": 2, "east": 3, "west": 3,
}  # fmt: skip

# (label, kernel, problem without the data size): the stencils of Cummins et al.'s Table 2, two
# synthetic ones and a described one. Each label is one compile-time variant (one entry in the
# feature cache).
KERNELS: tuple[tuple[str, str | dict[str, Any], dict[str, Any]], ...] = (
    ("sobel", "sobel", {}),
    ("heat", "heat", {}),
    ("gol", "gol", {}),
    ("nms", "nms", {}),
    ("threshold", "threshold", {}),
    ("gaussian[r=1]", "gaussian", {"radius": 1}),
    ("gaussian[r=3]", "gaussian", {"radius": 3}),
    ("gaussian[r=5]", "gaussian", {"radius": 5}),
    ("synthetic[n=5,complex]", "synthetic", {"north": 5, "complex": True}),
    ("synthetic[s=2,int]", "synthetic", {"south": 2, "dtype": "int"}),
    ("described cross", CROSS, {}),
)
SIZES: tuple[tuple[int, int], ...] = ((512, 512), (1024, 1024), (2048, 2048), (4096, 2048))


@dataclass(frozen=True)
class Scenario:
    label: str  # the kernel variant, for the per-kernel table
    body: bytes  # the JSON request, encoded once so the client's encoding is not timed


@dataclass(frozen=True)
class Stats:
    p50: float
    p90: float
    p99: float
    max: float

    @staticmethod
    def of(values: list[float]) -> Stats:
        q = statistics.quantiles(values, n=100, method="inclusive")
        return Stats(q[49], q[89], q[98], max(values))

    def row(self) -> str:
        return f"{self.p50:8.3f} {self.p90:8.3f} {self.p99:8.3f} {self.max:8.3f}"

    def to_json(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in vars(self).items()}


def scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for label, kernel, extra in KERNELS:
        for width, height in SIZES:
            for device in DEVICES:
                problem = {**extra, "width": width, "height": height}
                body = {"kernel": kernel, "problem": problem, "device": device}
                out.append(Scenario(label, json.dumps(body).encode()))
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Client:
    """One persistent HTTP/1.1 connection; ``call`` returns (round-trip ms, decoded JSON)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection(HOST, port, timeout=30)
        self.headers = {"Content-Type": "application/json", "Connection": "keep-alive"}

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[float, Any]:
        started = time.perf_counter()
        self.conn.request(method, path, body=body, headers=self.headers)
        response = self.conn.getresponse()
        data = response.read()
        elapsed = (time.perf_counter() - started) * 1000.0
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: HTTP {response.status}: {data[:300]!r}")
        return elapsed, json.loads(data)

    def close(self) -> None:
        self.conn.close()


def start_server(model: Path | None, db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "perfport", "serve", "--db", str(db)]
    command += ["--model", str(model)] if model else []
    command += ["--host", HOST, "--port", str(port)]
    with log.open("wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)


def wait_healthy(server: subprocess.Popen[bytes], port: int, log: Path, limit_s: float) -> Any:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the daemon exited ({server.returncode}):\n{log.read_text()}")
        conn = http.client.HTTPConnection(HOST, port, timeout=2)
        try:
            conn.request("GET", "/v1/health")
            response = conn.getresponse()
            if response.status == 200:
                return json.loads(response.read())
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.1)
    raise RuntimeError(
        f"the daemon did not answer /v1/health in {limit_s:.0f} s:\n{log.read_text()}"
    )


def stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def measure(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    all_scenarios = scenarios()
    rng = random.Random(args.seed)

    # Warm-up, part 1: every scenario once, in order. The first request of each kernel variant
    # compiles it for its features (cached from then on): that is the cold cost (the very
    # first request also pays the daemon's first-request set-up).
    cold: dict[str, float] = {}
    for s in all_scenarios:
        ms, _ = client.call("POST", "/v1/wg/predict", s.body)
        cold.setdefault(s.label, ms)
    # A launcher reports a refused size: the database then exists, and every prediction looks
    # up this device's refusals for its kernel in SQLite (as a deployed daemon does).
    first = json.loads(all_scenarios[0].body)
    _, answer = client.call("POST", "/v1/wg/predict", all_scenarios[0].body)
    refusal = {**first, "wg": answer["wg"], "message": "CL_INVALID_WORK_GROUP_SIZE (benchmark)"}
    client.call("POST", "/v1/wg/refused", json.dumps(refusal).encode())
    # First-time questions: every scenario at data sizes not asked before (--first-time
    # rounds). Its features are cached (sizes are not compiled in) but its answer is not, so
    # the legal sizes are computed and the model runs; the SQLite look-up is paid as well.
    first_time: list[float] = []
    first_inside: list[float] = []
    bodies = []
    for n in range(args.first_time * len(all_scenarios)):
        body = json.loads(all_scenarios[n % len(all_scenarios)].body)
        body["problem"] = {**body["problem"], "width": 600 + 8 * n, "height": 600 + 8 * n}
        bodies.append(json.dumps(body).encode())
    gc.collect()
    gc.disable()
    try:
        for body in bodies:
            ms, answer = client.call("POST", "/v1/wg/predict", body)
            first_time.append(ms)
            if answer.get("cached") is False and isinstance(answer.get("predict_ms"), int | float):
                first_inside.append(float(answer["predict_ms"]))
    finally:
        gc.enable()
    # Warm-up, part 2: the timed loop's own pattern, not recorded.
    for _ in range(args.warmup):
        client.call("POST", "/v1/wg/predict", rng.choice(all_scenarios).body)
        client.call("GET", "/v1/health")

    predict: list[float] = []
    health: list[float] = []
    inside: list[float] = []
    by_kernel: dict[str, list[float]] = defaultdict(list)
    refused_seen = 0
    order = [rng.choice(all_scenarios) for _ in range(args.requests)]
    # The client's own garbage collector is paused so its pauses do not land in the server's
    # numbers; the server's collector runs as it would in deployment.
    gc.collect()
    gc.disable()
    try:
        for s in order:
            ms, answer = client.call("POST", "/v1/wg/predict", s.body)
            predict.append(ms)
            by_kernel[s.label].append(ms)
            if isinstance(answer.get("predict_ms"), int | float):
                inside.append(float(answer["predict_ms"]))
            refused_seen += int(answer.get("refused_known", 0) > 0)
            ms, _ = client.call("GET", "/v1/health")
            health.append(ms)
    finally:
        gc.enable()

    return {
        "predict": Stats.of(predict),
        "health": Stats.of(health),
        "predict_ms_inside": Stats.of(inside) if len(inside) >= 2 else None,
        "by_kernel": {k: Stats.of(v) for k, v in sorted(by_kernel.items()) if len(v) >= 2},
        "cold_ms": cold,
        "first_time": Stats.of(first_time),
        "first_time_ms": first_time,
        "first_time_inside": Stats.of(first_inside) if len(first_inside) >= 2 else None,
        "scenarios": len(all_scenarios),
        "answers_with_refusal": refused_seen,
    }


def report(result: dict[str, Any], header: dict[str, Any], args: argparse.Namespace) -> None:
    predict: Stats = result["predict"]
    health: Stats = result["health"]
    inside: Stats | None = result["predict_ms_inside"]
    ratio = predict.p99 / health.p99 if health.p99 > 0 else float("inf")
    first: Stats = result["first_time"]
    met = predict.p99 < TARGET_MS
    verdict = (
        f"p99 predict {predict.p99:.3f} ms (questions asked before: answers cached): target < "
        f"{TARGET_MS:g} ms {'met' if met else 'not met'}; first-time questions (the model runs) "
        f"p99 {first.p99:.3f} ms: {'met' if first.p99 < TARGET_MS else 'not met'}"
    )
    if args.json:
        summary = {
            **header,
            "requests": args.requests,
            "warmup": args.warmup,
            "scenarios": result["scenarios"],
            "predict_round_trip_ms": predict.to_json(),
            "health_round_trip_ms": health.to_json(),
            "p99_ratio_predict_over_health": round(ratio, 3),
            "predict_ms_reported": inside.to_json() if inside else None,
            "first_time_questions": len(result["first_time_ms"]),
            "first_time_round_trip_ms": first.to_json(),
            "first_time_predict_ms_reported": (
                result["first_time_inside"].to_json() if result["first_time_inside"] else None
            ),
            "by_kernel_round_trip_ms": {k: s.to_json() for k, s in result["by_kernel"].items()},
            "cold_first_request_ms": {k: round(v, 3) for k, v in result["cold_ms"].items()},
            "answers_with_refusal": result["answers_with_refusal"],
            "target_ms": TARGET_MS,
            "target_met": met,
            "verdict": verdict,
        }
        print(json.dumps(summary, indent=1))
        return
    print(
        f"perfport {header['perfport']} daemon on {HOST}, Python {header['python']}, "
        f"{header['cpus']} cores (os.cpu_count()), load average {header['load_average']} at start"
    )
    print(
        "client and daemon share these cores with whatever else runs; other jobs may run too, "
        "so these are upper bounds"
    )
    print(
        f"model: {header['method']} trained on {header['trained_on']} scenarios ({header['model']})"
    )
    print(
        f"{args.requests} sequential requests, one keep-alive connection, after {args.warmup} "
        f"warm-up pairs; {result['scenarios']} scenarios ({len(KERNELS)} kernel variants x "
        f"{len(SIZES)} sizes x {len(DEVICES)} devices)"
    )
    print()
    print(f"{'ms':34} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    print(f"{'POST /v1/wg/predict round trip':34} {predict.row()}")
    print(f"{'GET /v1/health round trip':34} {health.row()}")
    print(f"{'first-time questions round trip':34} {first.row()}")
    if inside:
        print(f"{'predict_ms reported by the daemon':34} {inside.row()}")
    if result["first_time_inside"]:
        print(f"{'  the same, first-time questions':34} {result['first_time_inside'].row()}")
    print(f"first-time questions: {len(result['first_time_ms'])} (each scenario at new data sizes)")
    print(f"p99 ratio predict / health: {ratio:.2f}")
    print()
    print(f"{'predict round trip by kernel, ms':34} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    for label, stats in result["by_kernel"].items():
        print(f"  {label:32} {stats.row()}")
    cold = result["cold_ms"]
    print(
        f"cold (first request of each kernel variant, compiles it for its features): "
        f"median {statistics.median(cold.values()):.1f} ms, max {max(cold.values()):.1f} ms"
    )
    print()
    print(verdict)


def smoke_model(path: Path) -> Path:
    """A nearest-neighbour model of the shipped data: trained in a second, where the default
    model's forests take half a minute, so a smoke run stays short."""
    shipped = resources.files("perfport").joinpath("datasets", "wg", "stencils.npz")
    with resources.as_file(shipped) as data:
        subprocess.run(
            [sys.executable, "-m", "perfport", "wg", "train", "--data", str(data),
             "--method", "performance_knn", "--out", str(path)],
            check=True, capture_output=True,
        )  # fmt: skip
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model",
        type=Path,
        help="a model from 'perfport wg train' (default: the daemon's own, trained on the "
        "dataset perfport ships)",
    )
    parser.add_argument("--requests", type=int, default=2000, help="timed requests (2000)")
    parser.add_argument("--warmup", type=int, default=200, help="extra warm-up pairs (200)")
    parser.add_argument(
        "--first-time", type=int, default=5, help="rounds of first-time questions (5)"
    )
    parser.add_argument("--seed", type=int, default=0, help="order of the scenarios (0)")
    parser.add_argument("--startup-timeout", type=float, default=120.0, help="seconds (120)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument(
        "--smoke", action="store_true", help="seconds: 20 requests, 5 warm-up pairs, 1 round"
    )
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.warmup, args.first_time = 20, 5, 1
    if args.requests < 2:
        parser.error("--requests must be at least 2")
    if args.model is not None and not args.model.is_file():
        parser.error(f"--model {args.model}: no such file")

    # SIGTERM ends the run like Ctrl-C does, through the finally below.
    def terminated(signum: int, _: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminated)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="perfport-daemon-latency-") as tmp:
        db, log = Path(tmp) / "wg.db", Path(tmp) / "serve.log"
        if args.smoke and args.model is None:
            args.model = smoke_model(Path(tmp) / "knn.model")
        port = free_port()
        server = start_server(args.model and args.model.resolve(), db, port, log)
        client: Client | None = None
        try:
            health = wait_healthy(server, port, log, args.startup_timeout)
            client = Client(port)
            result = measure(client, args)
        except KeyboardInterrupt:
            print("interrupted; the daemon is stopped", file=sys.stderr)
            return 130
        finally:
            if client is not None:
                client.close()
            stop_server(server)
    header = {
        "perfport": health.get("version"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": load,
        "method": health.get("method"),
        "trained_on": health.get("trained_on"),
        "model": str(args.model or "default: trained on the shipped dataset"),
    }
    report(result, header, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
