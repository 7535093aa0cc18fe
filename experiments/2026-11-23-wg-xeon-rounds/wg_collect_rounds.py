"""Collect stencil work-group scenarios on a PoCL CPU in interleaved rounds, builds first.

Runs on the GPU machine's 16-core host (docs/wg.md, "Collecting data"). On PoCL every new
work-group size compiles a kernel specialisation at its first launch, and the 229 sizes of a
scenario make those builds most of the first round's time. So the scenarios not yet complete
in --db are first launched once at every size by --prebuild worker processes in parallel, one
PoCL thread each (into throw-away stores), which leaves every specialisation in PoCL's on-disk
kernel cache (its key does not depend on the thread count); then they are measured one after
the other, with nothing else running, in --rounds interleaved rounds
(``perfport.wg.collect``). Stop it whenever: a scenario is stored when all its
rounds are done, and the next run resumes; one still running when the process is killed is
lost, so leave --max-time room for the slowest scenario (gaussian r = 5 at 1024^2 needs more
than 460 s of rounds on the 16-core Xeon).

    python3 experiments/2026-11-23-wg-xeon-rounds/wg_collect_rounds.py --scenarios 60 --sizes 512,1024 \
        --rounds 8 --repeats 1 --prebuild 16 --prebuild-time 200 --max-time 420 --db rounds.db

``--max-border``, ``--no-real-world`` and ``--seed`` choose the scenarios as they do for
``perfport wg collect`` (e.g. compact synthetic stencils only: ``--max-border 5
--no-real-world --seed 1``). ``--candidates K`` measures only K work-group sizes, chosen from
the shipped dataset's CPU scenarios so that the best of them comes closest to each one's
fastest size (``covering_sizes``), plus w(32x4), the default the outputs are checked against:
many more scenarios in the same time, each with its best among those sizes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.store import Store
from perfport.tune.tune import resolve_problem
from perfport.wg import collect, dataset_path, load_dataset
from perfport.wg.predictors.vectors import covering_sizes, performance_vectors
from perfport.wg.scenarios import Scenario, scenarios

Sizes = tuple[tuple[int, int], ...] | None


def cpu_candidates(count: int) -> tuple[tuple[int, int], ...]:
    """``count`` sizes covering the shipped dataset's CPU scenarios, and w(32x4)."""
    data = load_dataset(dataset_path(None))
    cpu = data.features[:, data.feature_names.index("device_is_cpu")] == 1
    picked = covering_sizes(performance_vectors(data), cpu, count)
    pairs = {(int(data.sizes[w][0]), int(data.sizes[w][1])) for w in picked} | {(32, 4)}
    return tuple(sorted(pairs))


def complete(db: Path, chosen: list[Scenario]) -> set[Scenario]:
    """The scenarios with a complete campaign in ``db`` (on any device: use one store per device)."""
    if not db.is_file():
        return set()
    with Store(db, create=False) as store:
        rows = store.query(
            "SELECT k.name, p.key FROM campaigns c JOIN kernels k ON k.id = c.kernel_id "
            "JOIN problems p ON p.id = c.problem_id WHERE c.status = 'complete'"
        )
    done = {(r[0], r[1]) for r in rows}
    return {
        s
        for s in chosen
        if (s.kernel, resolve_problem(builtin(s.kernel), dict(s.problem)).key) in done
    }


def _warm(job: tuple[str, Scenario, str, Sizes]) -> tuple[str, float]:
    device, scenario, db, sizes = job
    started = time.monotonic()
    for _ in collect(get_device(device), [scenario], db, repeats=1, sizes=sizes):
        pass
    return scenario.label, time.monotonic() - started


def _one_thread() -> None:
    # PoCL runs a launch on every core; 16 workers doing so fight over the cores (a scenario's
    # builds took 70-200 s instead of about 15 s). The kernel cache does not depend on it.
    os.environ["POCL_MAX_PTHREAD_COUNT"] = "1"


def prebuild(
    device: str, todo: list[Scenario], workers: int, seconds: float, sizes: Sizes = None
) -> None:
    """Launch every size of ``todo`` once, ``workers`` scenarios at a time, for at most ``seconds``."""
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory() as tmp,
        multiprocessing.get_context("spawn").Pool(workers, initializer=_one_thread) as pool,
    ):
        jobs = [(device, s, f"{tmp}/{i}.db", sizes) for i, s in enumerate(todo)]
        pending = pool.imap_unordered(_warm, jobs)
        for _ in jobs:
            left = seconds - (time.monotonic() - started)
            try:
                label, took = pending.next(timeout=max(left, 0.001))
            except multiprocessing.TimeoutError:
                print(f"prebuild: stopped after {seconds:.0f} s", flush=True)
                pool.terminate()
                return
            print(f"prebuilt {label} in {took:.1f} s", flush=True)
    print(f"prebuild: {len(todo)} scenarios in {time.monotonic() - started:.1f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="opencl:0:0")
    parser.add_argument("--scenarios", type=int, default=60)
    parser.add_argument("--sizes", default="512,1024")
    parser.add_argument("--max-border", type=int, default=30, help="as for 'perfport wg collect'")
    parser.add_argument("--no-real-world", dest="real_world", action="store_false")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic scenarios")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--prebuild", type=int, default=16, help="worker processes (0: none)")
    parser.add_argument("--prebuild-time", type=float, default=200.0)
    parser.add_argument("--max-time", type=float, default=420.0, help="start no scenario after")
    parser.add_argument("--candidates", type=int, default=0,
                        help="measure only this many covering sizes and w(32x4) (0: all)")  # fmt: skip
    parser.add_argument("--db", type=Path, required=True)
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    if args.max_border < 0:
        parser.error(f"--max-border {args.max_border}: borders are 0 or more")
    try:
        chosen = scenarios(args.scenarios, sizes, args.seed, args.max_border, args.real_world)
    except ValueError as exc:
        parser.error(f"--scenarios: {exc}")
    if args.candidates < 0:
        parser.error(f"--candidates {args.candidates}: give a count of sizes, or 0 for all")
    sizes = cpu_candidates(args.candidates) if args.candidates else None
    if sizes:
        print(f"{len(sizes)} candidate sizes: {' '.join(f'{c}x{r}' for c, r in sizes)}", flush=True)
    done = complete(args.db, chosen)
    todo = [s for s in chosen if s not in done]
    print(f"{len(done)} of {len(chosen)} scenarios complete in {args.db}", flush=True)
    started = time.monotonic()
    if todo and args.prebuild > 0:
        prebuild(args.device, todo, args.prebuild, args.prebuild_time, sizes)
    left = args.max_time - (time.monotonic() - started)
    device = get_device(args.device)
    for step in collect(device, todo, args.db, args.repeats, left, args.rounds, sizes):
        line = {"scenario": step.scenario.label, "measured": step.measured,
                "outcomes": step.outcomes, "seconds": round(step.seconds, 1)}  # fmt: skip
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
