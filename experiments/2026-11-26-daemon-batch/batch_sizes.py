"""How many questions a batch holds when 1 and 32 clients ask first-time questions at once:
a one-process daemon (``--workers 1``) is warmed up, asked, and its ``/v1/health`` counts
(``batches``) read before and after each load.

    PYTHONPATH=src python experiments/2026-11-26-daemon-batch/batch_sizes.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import daemon_latency as dl
import daemon_load


def counts(port: int) -> tuple[int, int]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health") as reply:
        batches = json.loads(reply.read())["batches"]
    return batches["batches"], batches["questions"]


def main() -> None:
    print("load average {:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp:
        port = dl.free_port()
        command = [sys.executable, "-m", "perfport", "serve", "--db", f"{tmp}/d.db",
                   "--port", str(port), "--workers", "1"]  # fmt: skip
        with open(f"{tmp}/log", "wb") as log:
            server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            dl.wait_healthy(server, port, Path(f"{tmp}/log"), 180.0)
            daemon_load.warm_up(port)
            offset = 10_000
            for clients in (1, 32):
                before = counts(port)
                stats = dl.concurrent(port, clients, 30, offset)
                offset += clients * 30 + 1000
                after = counts(port)
                batches, questions = after[0] - before[0], after[1] - before[1]
                print(
                    f"{clients:2} clients: {questions} questions in {batches} batches, "
                    f"{questions / batches:.2f} a batch; p50 {stats.p50:.1f} ms p99 {stats.p99:.1f} ms"
                )
        finally:
            dl.stop_server(server)


if __name__ == "__main__":
    main()
