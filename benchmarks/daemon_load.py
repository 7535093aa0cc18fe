"""The daemon under load: CPU per first-time answer and round trips from many clients, for
several daemons side by side in one run (this checkout with 1 and N worker processes, and
optionally another checkout's daemon as the baseline).

    pip install -e '.[pocl,features,serve]'
    python benchmarks/daemon_load.py [--baseline-src ../main/src] [--workers 1,2]
                                     [--clients 1,8,32] [--per-client 30] [--answers 300]
                                     [--rounds 2] [--model MODEL] [--json]
                                     [--server-cpus 0,1 --client-cpus 2-5]

Goals (issue 23): first-time questions p99 under 5 ms at 1 client and under 50 ms at 32.

Each round starts every daemon in turn (``python -m perfport serve``; ``--baseline-src``
puts that directory first on PYTHONPATH, without ``--workers`` when it has none), warms it up
(every kernel variant from 8 connections, so each worker has compiled each kernel), then
measures: the daemon's CPU time (all its processes, from /proc) per first-time question over
one connection (--answers questions), and first-time questions from N clients at once
(``daemon_latency.concurrent``). Rounds interleave the daemons, so a change in the machine's
load hits all of them alike; the ratios compare daemons within one round. Client and daemon
share the machine: on a small or busy one the round trips are upper bounds. The client's own
CPU time per question (this process's, from the kernel) is reported beside the daemon's, so a
reader sees how much of the cores the load generator took.

``--server-cpus`` and ``--client-cpus`` (Linux CPU lists, e.g. ``0,1`` and ``2-5``) pin the
daemon, with every process it starts, and this process (the load generator) to disjoint CPU
sets, so the daemon is measured on its cores without the client on them; the sets, as the
kernel reports them back, are in the output.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import daemon_latency as dl

GOALS = {1: 5.0, 32: 50.0}  # clients -> p99 goal, ms


@dataclass(frozen=True)
class Variant:
    label: str
    src: Path | None  # first on PYTHONPATH; None: this checkout as installed
    workers: int | None  # None: the daemon's own default (a baseline without --workers)


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its living descendants (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited meanwhile
    return total


def cpu_list(text: str) -> frozenset[int]:
    """A Linux CPU list ('0,2-3') as a set of CPU numbers; ValueError names what is wrong."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        low = int(first)
        high = int(last) if dash else low
        if not 0 <= low <= high:
            raise ValueError(f"{part.strip()!r} is not a CPU number or a range low-high")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


@dataclass(frozen=True)
class Pinning:
    server: frozenset[int] | None  # the daemon's CPUs (inherited by its workers); None: any
    client: frozenset[int] | None  # this process's CPUs (the load generator); None: any

    def describe(self, server_pid: int | None = None) -> dict[str, Any]:
        """The sets as the kernel reports them (the daemon's read back when it runs)."""
        server = self.server
        if server_pid is not None and server is not None:
            server = frozenset(os.sched_getaffinity(server_pid))
        return {
            "server_cpus": None if server is None else sorted(server),
            "client_cpus": sorted(os.sched_getaffinity(0)) if self.client else None,
        }


def start(
    variant: Variant, model: Path | None, db: Path, port: int, log: Path, pin: Pinning
) -> Any:
    command = [sys.executable, "-m", "perfport", "serve", "--db", str(db), "--port", str(port)]
    command += ["--model", str(model)] if model else []
    command += ["--workers", str(variant.workers)] if variant.workers else []
    env = dict(os.environ)
    if variant.src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(variant.src), env.get("PYTHONPATH", "")])
    # Set in the child before Python starts, so every process the daemon forks inherits it.
    pinned = None if pin.server is None else functools.partial(os.sched_setaffinity, 0, pin.server)
    with log.open("wb") as out:
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=pinned
        )


def warm_up(port: int) -> None:
    """Every kernel variant from 8 connections: each worker meets (and compiles) each one."""
    variants: dict[str, dl.Scenario] = {}
    for s in dl.scenarios():
        variants.setdefault(s.label, s)
    bodies = [s.body for s in variants.values()]
    clients = [dl.Client(port) for _ in range(8)]
    try:
        for body in bodies:
            for client in clients:
                client.call("POST", "/v1/wg/predict", body)
    finally:
        for client in clients:
            client.close()


@dataclass(frozen=True)
class Cpu:
    server_ms: float  # the daemon's CPU (all its processes) per question
    client_ms: float  # this process's CPU (the load generator) per question


def cpu_per_answer(pid: int, port: int, answers: int, offset: int) -> Cpu:
    """CPU ms per first-time question, asked one after another, of the daemon and client."""
    all_scenarios, client = dl.scenarios(), dl.Client(port)
    bodies = []
    for n in range(answers):
        body = json.loads(all_scenarios[n % len(all_scenarios)].body)
        body["problem"] = {**body["problem"], "width": 3000 + 8 * (offset + n)}
        bodies.append(json.dumps(body).encode())
    try:
        before, mine = tree_cpu_s(pid), time.process_time()
        for body in bodies:
            client.call("POST", "/v1/wg/predict", body)
        return Cpu(
            (tree_cpu_s(pid) - before) * 1000.0 / answers,
            (time.process_time() - mine) * 1000.0 / answers,
        )
    finally:
        client.close()


def run_one(
    variant: Variant, args: argparse.Namespace, tmp: Path, round_: int, pin: Pinning
) -> dict[str, Any]:
    db, log = tmp / f"{variant.label}-{round_}.db", tmp / f"{variant.label}-{round_}.log"
    port = dl.free_port()
    server = start(variant, args.model, db, port, log, pin)
    try:
        dl.wait_healthy(server, port, log, args.startup_timeout)
        warm_up(port)
        cpu = cpu_per_answer(server.pid, port, args.answers, 0)
        out: dict[str, Any] = {
            "cpu_ms_per_answer": cpu.server_ms,
            "client_cpu_ms_per_answer": cpu.client_ms,
        }
        for n, clients in enumerate(args.clients):
            offset = 100_000 * (n + 1)  # sizes no earlier pass asked about
            before, mine = tree_cpu_s(server.pid), time.process_time()
            out[f"clients_{clients}"] = dl.concurrent(port, clients, args.per_client, offset)
            asked = clients * args.per_client
            out[f"clients_{clients}_server_cpu_ms"] = (
                (tree_cpu_s(server.pid) - before) * 1e3 / asked
            )
            out[f"clients_{clients}_client_cpu_ms"] = (time.process_time() - mine) * 1e3 / asked
        out["pinning"] = pin.describe(server.pid)
        return out
    finally:
        dl.stop_server(server)


def summary(rows: list[dict[str, Any]], key: str, field: str) -> str:
    values = [getattr(r[key], field) if field else r[key] for r in rows]
    middle = statistics.median(values)
    return f"{middle:7.2f} [{min(values):6.2f}-{max(values):6.2f}]"


def _plain(value: Any) -> Any:
    if isinstance(value, dl.Stats):
        return value.to_json()
    return round(value, 4) if isinstance(value, float) else value


def report(
    results: dict[str, list[dict[str, Any]]], args: argparse.Namespace, pin: dict[str, Any]
) -> None:
    load = os.getloadavg()
    if args.json or args.json_out:
        out = {label: [{k: _plain(v) for k, v in r.items()} for r in rows]
               for label, rows in results.items()}  # fmt: skip
        text = json.dumps({"cpus": os.cpu_count(), "load_average": load, **pin, **out}, indent=1)
        if args.json_out:
            args.json_out.write_text(text + "\n")
        if args.json:
            print(text)
            return
    print(f"{os.cpu_count()} cores, load average {', '.join(f'{x:.2f}' for x in load)}"
          f"; {args.rounds} rounds; median [min-max] over rounds")  # fmt: skip
    print(f"daemon on CPUs {pin['server_cpus'] or 'any'}, client on CPUs "
          f"{pin['client_cpus'] or 'any'}")  # fmt: skip
    print(f"{'daemon':22} {'CPU ms/answer':>22} {'client CPU ms/answer':>22}" + "".join(
        f" {f'{c} clients p50':>22} {f'{c} clients p99':>22}" for c in args.clients))  # fmt: skip
    for label, rows in results.items():
        line = f"{label:22} {summary(rows, 'cpu_ms_per_answer', '')}"
        line += f" {summary(rows, 'client_cpu_ms_per_answer', '')}"
        for c in args.clients:
            line += (
                f" {summary(rows, f'clients_{c}', 'p50')} {summary(rows, f'clients_{c}', 'p99')}"
            )
        print(line)
    print()
    print("CPU ms per question while N clients ask at once (daemon / client):")
    for label, rows in results.items():
        print(f"  {label:22}" + "".join(
            f"  {c} clients: {summary(rows, f'clients_{c}_server_cpu_ms', '').strip()} / "
            f"{summary(rows, f'clients_{c}_client_cpu_ms', '').strip()}" for c in args.clients))  # fmt: skip
    labels = list(results)
    print()
    for label in labels[1:]:
        ratios = [
            a["cpu_ms_per_answer"] / b["cpu_ms_per_answer"]
            for a, b in zip(results[labels[0]], results[label], strict=True)
        ]
        print(f"ratio CPU per answer {labels[0]} / {label}: "
              + ", ".join(f"{r:.2f}" for r in ratios) + " (per round)")  # fmt: skip
    for label, rows in results.items():
        for clients, goal in GOALS.items():
            key = f"clients_{clients}"
            if rows and key in rows[0]:
                worst = max(r[key].p99 for r in rows)
                verdict = "met" if worst < goal else "not met"
                print(f"{label}: {clients} clients, p99 goal < {goal:g} ms: {verdict} in the "
                      f"worst round ({worst:.1f} ms)")  # fmt: skip


def pinning(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Pinning:
    """The CPU sets of --server-cpus and --client-cpus, checked; this process is pinned now."""
    try:
        server = cpu_list(args.server_cpus) if args.server_cpus else None
        client = cpu_list(args.client_cpus) if args.client_cpus else None
    except ValueError as exc:
        parser.error(f"--server-cpus/--client-cpus: {exc}; give a CPU list such as 0,1 or 2-5")
    allowed = os.sched_getaffinity(0)
    for flag, cpus in (("--server-cpus", server), ("--client-cpus", client)):
        if cpus is not None and not cpus <= allowed:
            parser.error(f"{flag}: CPUs {sorted(cpus - allowed)} are not available here "
                         f"(this process may run on {sorted(allowed)})")  # fmt: skip
    if server is not None and client is not None and server & client:
        parser.error(f"--server-cpus and --client-cpus share CPUs {sorted(server & client)}: "
                     "give disjoint sets")  # fmt: skip
    if client is not None:
        os.sched_setaffinity(0, client)
    return Pinning(server, client)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src/, compared first")
    parser.add_argument("--workers", default="1,2", help="worker counts of this checkout (1,2)")
    parser.add_argument("--clients", default="1,8,32", help="clients at once (1,8,32)")
    parser.add_argument("--per-client", type=int, default=30, help="questions per client (30)")
    parser.add_argument("--answers", type=int, default=300, help="questions for CPU/answer (300)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the daemons (2)")
    parser.add_argument("--model", type=Path, help="a model from 'perfport wg train'")
    parser.add_argument("--startup-timeout", type=float, default=180.0, help="seconds (180)")
    parser.add_argument("--server-cpus", help="pin the daemon to these CPUs, e.g. 0,1 (Linux)")
    parser.add_argument("--client-cpus", help="pin the load generator to these CPUs, e.g. 2-5")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--json-out", type=Path, help="also write the results as JSON here")
    parser.add_argument("--smoke", action="store_true", help="seconds: tiny counts, one round")
    args = parser.parse_args()
    if args.smoke:
        args.per_client, args.answers, args.rounds, args.clients = 3, 20, 1, "1,4"
    try:
        args.clients = [int(c) for c in args.clients.split(",") if c]
        workers = [int(w) for w in args.workers.split(",") if w]
    except ValueError:
        parser.error("--clients and --workers take comma-separated integers, e.g. 1,8,32")
    if not Path("/proc/self/stat").is_file():
        parser.error("reads the daemon's CPU time from /proc: Linux only")
    if args.baseline_src is not None and not (args.baseline_src / "perfport").is_dir():
        parser.error(f"--baseline-src {args.baseline_src}: no perfport package there")
    pin = pinning(parser, args)
    variants = [Variant("baseline", args.baseline_src.resolve(), None)] if args.baseline_src else []
    variants += [Variant(f"this, {w} worker{'s' * (w > 1)}", None, w) for w in workers]
    results: dict[str, list[dict[str, Any]]] = {v.label: [] for v in variants}
    seen = pin.describe()
    with tempfile.TemporaryDirectory(prefix="perfport-daemon-load-") as tmp:
        if args.smoke and args.model is None:
            args.model = dl.smoke_model(Path(tmp) / "knn.model")
        for round_ in range(args.rounds):
            for variant in variants:
                started = time.monotonic()
                row = run_one(variant, args, Path(tmp), round_, pin)
                seen = row.pop("pinning")  # as the kernel reported it for the running daemon
                results[variant.label].append(row)
                print(f"round {round_ + 1}: {variant.label} done in "
                      f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
    report(results, args, seen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
