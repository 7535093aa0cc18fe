"""What a question costs the daemon in one process, without sockets: the ASGI app driven
directly for a remembered question (the HTTP framework's share, the model not asked: the
daemon's app, whose fast path answers it, and the FastAPI app behind it, as before), the
pieces of that path, and the model's share per question in batches of 1, 8 and 32 first-time
questions (``WgService.answer_many``). Medians in ms; the load average is printed first.

    PYTHONPATH=src python experiments/2026-11-26-daemon-batch/http_path.py
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import daemon_latency as dl
from perfport.cli.wg import wg_model
from perfport.service.app import create_app
from perfport.service.schemas import PredictRequest
from perfport.service.service import WgService


def bodies(n: int, offset: int = 0) -> list[bytes]:
    scenarios, out = dl.scenarios(), []
    for i in range(n):
        body = json.loads(scenarios[i % len(scenarios)].body)
        body["problem"] = {**body["problem"], "width": 4000 + 8 * (i + offset)}
        out.append(json.dumps(body).encode())
    return out


def scope(body: bytes) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": "/v1/wg/predict",
            "raw_path": b"/v1/wg/predict", "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8765)}  # fmt: skip


async def call(app: Any, body: bytes) -> int:
    given = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope(body), receive, send)
    return status


def median_ms(step: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000.0


def main() -> None:
    print("load average {:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg()))
    model = wg_model(None)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "daemon.db"
        app = create_app(model, db)
        loop = asyncio.new_event_loop()
        asked = bodies(len(dl.scenarios()))
        for body in asked:  # compiled and answered once: later calls are remembered
            assert loop.run_until_complete(call(app, body)) == 200
        gc.collect()
        gc.freeze()
        body = asked[0]
        print("a remembered question, in process (no sockets):")
        whole = median_ms(lambda: loop.run_until_complete(call(app, body)), 2000)
        framework = median_ms(lambda: loop.run_until_complete(call(app.app, body)), 2000)
        print(f"  the daemon's app, whole  median {whole:.3f} ms (the fast path)")
        print(f"  the FastAPI app alone    median {framework:.3f} ms (its route, as before)")
        request = PredictRequest.model_validate_json(body)
        print(
            f"  json.loads + validate    median {median_ms(lambda: PredictRequest.model_validate(json.loads(body)), 4000):.3f} ms"
        )
        print(
            f"  model_validate_json      median {median_ms(lambda: PredictRequest.model_validate_json(body), 4000):.3f} ms"
        )
        print(
            f"  the key (dump_json)      median {median_ms(request.model_dump_json, 4000):.3f} ms"
        )
        service = WgService(model, db)
        print("the model's work per first-time question, in batches (answer_many):")
        offset = 1000
        for size in (1, 8, 32):
            times = []
            for _ in range(40):
                offset += size
                reqs = [PredictRequest.model_validate_json(b) for b in bodies(size, offset)]
                qs = []
                for r in reqs:
                    key = r.model_dump_json()
                    found = service.scenario(key, r.kernel_given(), r.problem, r.device)
                    if not service.compiled(found):
                        service.prepare(found)
                    qs.append((key, found, service.refused(found)))
                started = time.perf_counter()
                service.answer_many(qs)
                times.append((time.perf_counter() - started) / size)
            print(
                f"  batch of {size:2}   median {statistics.median(times) * 1000.0:.3f} ms a question"
            )


if __name__ == "__main__":
    main()
