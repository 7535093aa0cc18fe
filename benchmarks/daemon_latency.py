"""Latency of the work-group-size prediction daemon on loopback.

    pip install -e '.[pocl,features,serve]'
    python benchmarks/daemon_latency.py [--model MODEL] [--requests 2000] [--first-time 5]
                                        [--clients 1,8,32] [--per-client 30] [--json]

Goals: "The daemon answers /v1/wg/predict in under 5 ms at p99 on loopback"; first-time
questions p99 under 5 ms at 1 client and under 50 ms at 32 clients.

The script starts ``python -m perfport serve [--model MODEL] --db TMPDB --port FREE_PORT`` on
127.0.0.1, waits for ``GET /v1/health``, and warms up: every scenario once (reported as "cold":
the first request of each kernel variant compiles it for its features, in a separate process,
cached from then on). Scenarios rotate over the built-in stencils of Cummins et al. (sobel,
heat, gol, nms, threshold, gaussian with three radii, synthetic) and a stencil sent as a
description, four data sizes and the three devices of
docs/results/2026-11-22-h100-builtins/devices.json. It then reports one refused size (so every
prediction pays its SQLite look-up of refused sizes) and measures, over one persistent HTTP/1.1
connection (``http.client``; round trips timed from sending to having read the whole body):
first-time questions (--first-time rounds of every scenario at data sizes not asked before:
features cached, answer not, so the legal sizes are computed and the model runs), then
--requests repeated questions (answers cached, keyed by the request and the refused sizes),
each followed by a ``GET /v1/health``, the baseline. With --clients, first-time questions come
from N connections at once (asyncio, raw HTTP/1.1), --per-client each, for every N given.

Prints p50, p90, p99 and max of each, the p99 ratio predict / health, the ``predict_ms`` the
daemon reports, and the verdicts. Client and server share the machine's cores (the header says
how many, and the load average), so on a small or busy machine the numbers are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import http.client
import json
import os
import platform
import random
import re
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
    {"name": "NVIDIA H100 80GB HBM3", "vendor": "NVIDIA Corporation", "type": "gpu",
     "backend": "opencl", "driver": "580.159.04", "platform": "NVIDIA CUDA OpenCL 3.0 CUDA 13.0.98",
     "version": "OpenCL 3.0 CUDA", "compute_units": 132, "max_work_group_size": 1024,
     "max_work_item_sizes": [1024, 1024, 64], "local_mem_bytes": 49152,
     "global_mem_bytes": 85017493504, "subgroup_size": 32},
    {"name": "NVIDIA H100 80GB HBM3", "vendor": "NVIDIA", "type": "gpu", "backend": "cuda",
     "driver": "CUDA driver 13.0", "platform": "CUDA runtime 13020", "version": "sm_90",
     "compute_units": 132, "max_work_group_size": 1024, "max_work_item_sizes": [1024, 1024, 64],
     "local_mem_bytes": 49152, "global_mem_bytes": 85017493504, "subgroup_size": 32},
    {"name": "cpu-skylake-avx512-Intel(R) Xeon(R) Processor", "vendor": "GenuineIntel",
     "type": "cpu", "backend": "opencl", "driver": "5.0+debian",
     "platform": "Portable Computing Language OpenCL 3.0 PoCL 5.0+debian",
     "version": "OpenCL 3.0 PoCL HSTR: cpu-x86_64-pc-linux-gnu-skylake-avx512",
     "compute_units": 16, "max_work_group_size": 4096, "max_work_item_sizes": [4096, 4096, 4096],
     "local_mem_bytes": 2097152, "global_mem_bytes": 3997814784, "subgroup_size": None},
)  # fmt: skip

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


CONCURRENT_TARGET_MS = 50.0  # first-time questions at 32 clients


async def _client(port: int, bodies: list[bytes], out: list[float]) -> None:
    """One keep-alive connection asking ``bodies`` in turn (raw HTTP/1.1, little client work)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        for body in bodies:
            head = (f"POST /v1/wg/predict HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: "
                    f"application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
            started = time.perf_counter()
            writer.write(head + body)
            header = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", header)
            data = await reader.readexactly(int(length.group(1)) if length else 0)
            out.append((time.perf_counter() - started) * 1000.0)
            if not header.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"HTTP {header[:40]!r}: {data[:300]!r}")
    finally:
        writer.close()


def concurrent(port: int, clients: int, per_client: int, offset: int) -> Stats:
    """First-time questions (new data sizes) from ``clients`` connections at once."""
    all_scenarios, bodies = scenarios(), []
    for n in range(clients * per_client):
        body = json.loads(all_scenarios[n % len(all_scenarios)].body)
        size = 4000 + 8 * (offset + n)
        bodies.append(json.dumps({**body, "problem": {**body["problem"], "width": size}}).encode())
    times: list[float] = []

    async def run() -> None:
        await asyncio.gather(*(_client(port, bodies[c::clients], times) for c in range(clients)))

    asyncio.run(run())
    return Stats.of(times)


def start_server(model: Path | None, db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "perfport", "serve", "--db", str(db)]
    command += ["--model", str(model)] if model else []
    # One process: its one connection's warm-up reaches every cache (daemon_load.py: workers).
    command += ["--host", HOST, "--port", str(port), "--workers", "1"]
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
            "concurrent_first_time_round_trip_ms": {
                str(n): st.to_json() for n, st in result["concurrent"].items()
            },
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
    for clients, stats in result["concurrent"].items():
        goal = TARGET_MS if clients == 1 else CONCURRENT_TARGET_MS if clients >= 32 else None
        met = (
            ""
            if goal is None
            else f" (goal < {goal:g} ms: {'met' if stats.p99 < goal else 'not met'})"
        )
        print(f"{clients:3} clients at once, first-time questions, ms: {stats.row()}{met}")
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
    parser.add_argument(
        "--clients", default="", help="also N clients at once, e.g. 1,8,32 (first-time questions)"
    )
    parser.add_argument("--per-client", type=int, default=30, help="questions per client (30)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument(
        "--smoke", action="store_true", help="seconds: 20 requests, 5 warm-up pairs, 1 round"
    )
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.warmup, args.first_time, args.per_client = 20, 5, 1, 3
        args.clients = args.clients or "1,4"
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
            result["concurrent"] = {}
            for n, clients in enumerate(int(c) for c in args.clients.split(",") if c):
                offset = 10_000 * (n + 1)  # sizes no earlier pass asked about
                result["concurrent"][clients] = concurrent(port, clients, args.per_client, offset)
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
