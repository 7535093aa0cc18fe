"""Compile every build of a kernel's search space in parallel, ahead of a tuning run.

    python3 benchmarks/prebuild.py convolution2d --device cuda:0 --jobs 16 [--problem k=v ...]

A brute-force run of a kernel whose builds are slow (the 2D convolution unrolls a 15x15
filter over each work-item's tile: about a second per build with NVRTC) spends most of its
time compiling, one build at a time. The backends keep what they compile in an on-disk cache
(CuPy's kernel cache, NVIDIA's OpenCL compute cache, PoCL's kernel cache), so compiling every
distinct set of defines once in ``--jobs`` processes first lets the tuning run load its builds
from there. Builds that fail are counted, not retried: the tuning run records them as
compile errors. With ``--db``, configurations that results database holds are skipped; builds
go in the space's order, so a prebuild started beside a resumed brute-force run stays ahead of
it. Prints one JSON line: builds, failed, seconds, jobs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from perfport._core import BuildError, Problem
from perfport.cli import parse_assignment
from perfport.devices import get_device, open_session
from perfport.kernels import resolve_kernel
from perfport.space import kernel_space
from perfport.store import Store, export_rows
from perfport.tune.tune import resolve_problem

_session: Any = None


def _build(args: tuple[str, str, dict[str, str]]) -> bool:
    """Compile one build in this worker's session; False when it does not compile."""
    global _session
    kernel, device_id, defines = args
    spec = resolve_kernel(kernel)
    if _session is None:
        _session = open_session(get_device(device_id, spec.language))
    try:
        _session.compile(spec.source, spec.language, spec.entry, defines)
    except BuildError:
        return False
    return True


def builds(
    kernel: str, device_id: str, problem: Problem, db: str | None = None
) -> list[dict[str, str]]:
    """The distinct define sets of the kernel's legal configurations on the device, in the
    space's order (brute force's), less those of configurations ``db`` holds for this problem."""
    spec = resolve_kernel(kernel)
    device = get_device(device_id, spec.language)
    full = spec.problem.merged(problem)
    done: set[str] = set()
    if db is not None:
        with Store(db) as store:
            rows = export_rows(store, kernel=spec.name, device=device.fingerprint)
            mine = json.dumps(dict(full), sort_keys=True)
            done = {
                json.dumps(r["config"], sort_keys=True)
                for r in rows
                if json.dumps(r["problem"], sort_keys=True) == mine
            }
    seen: dict[tuple[tuple[str, str], ...], None] = {}
    for config in kernel_space(spec, full, device):
        if json.dumps(dict(config), sort_keys=True) not in done:
            seen.setdefault(tuple(spec.build_defines(spec.env(config, full)).items()))
    return [dict(d) for d in seen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", help="built-in name or spec file")
    parser.add_argument("--device", required=True, help="device id (see 'perfport devices')")
    parser.add_argument("--problem", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--jobs", type=int, default=8, help="compiling processes (default 8)")
    parser.add_argument("--db", help="skip configurations this results database holds")
    args = parser.parse_args(argv)
    problem = resolve_problem(
        resolve_kernel(args.kernel), dict(parse_assignment(p) for p in args.problem)
    )
    todo = builds(args.kernel, args.device, problem, args.db)
    started = time.perf_counter()
    # Spawned, not forked: listing the devices has initialised CUDA in this process.
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        ok = list(pool.map(_build, [(args.kernel, args.device, d) for d in todo], chunksize=4))
    seconds = time.perf_counter() - started
    report = {"builds": len(todo), "failed": ok.count(False), "seconds": round(seconds, 1)}
    print(json.dumps(report | {"jobs": args.jobs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
