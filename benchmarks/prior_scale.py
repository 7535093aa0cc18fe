"""The prior at scale: how long ``transfer_prior`` takes, and how much memory, with many
devices' results of one kernel in the store.

    python benchmarks/prior_scale.py [--devices 64] [--db /tmp/prior-scale.db] [--data ../shared/data]
    python benchmarks/prior_scale.py --smoke      # seconds: 3 devices

The store holds the Kernel Tuner GEMM cache of the RTX 3090 (17,956 configurations, every one
with its repeated timings) as ``--devices`` devices: the first is the cache itself, the others
are synthetic (each configuration's times scaled by a factor drawn per device and
configuration, log-normal, sigma 0.3, so every device has its own ranking). 64 devices are
1.15M results. The store is built once through the store API (``record_many``) and reused when
``--db`` exists. Then, each in a fresh process so that its peak memory is its own, the prior
for a new device is built by

- ``sql``: ``perfport.tune.prior.transfer_prior`` (per-configuration sums computed by SQLite);
- ``rows``: the code before 2026-11-26 (kept below for this comparison only), which read every
  result, samples included, into Python objects.

It prints each one's time and peak RSS (the process's, Python and numpy included; the line
``startup`` is that of a process that only imports them), and whether the two priors agree.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Measurement, Outcome
from perfport.space import PruningReport
from perfport.store import CampaignStatus, Store, export_rows
from perfport.store.formats.imported import external_device
from perfport.store.formats.importing import parse
from perfport.tune.prior import Prior, transfer_prior

CACHE = "kerneltuner-benchmark_hub/gemm/RTX_3090.json.gz"
_SCALED = ("min", "median", "mean", "std", "ci_low", "ci_high")
NEW_DEVICE = "the new device"


def build(db: Path, cache: Path, devices: int) -> None:
    """The cache as ``devices`` devices' results (see the module doc)."""
    imported = parse(cache)
    cartesian = math.prod(len(v) for v in imported.params.values())
    report = PruningReport(cartesian, len(imported.measurements), ())
    rng = np.random.default_rng(0)
    with Store(db) as store:
        kernel = store.external_kernel_id(imported.kernel, imported.format, imported.params)
        problem = store.problem_id(imported.problem)
        for d in range(devices):
            info = external_device(f"synthetic GPU {d}" if d else imported.device)
            ids = (store.device_id(info), kernel, problem)
            campaign = store.open_campaign(f"scale-{d}", ids, "imported", 0, {}, report)
            scale = np.exp(rng.normal(0.0, 0.3, len(imported.measurements))) if d else None
            out = []
            for k, m in enumerate(imported.measurements):
                if scale is None or not m.ok:
                    out.append(m)
                    continue
                f = float(scale[k])
                times = tuple(t * f for t in m.times_ms)
                # Every statistic scales with the times: scaling them saves summarising 1M
                # results again (a millisecond each).
                stats = dataclasses.replace(
                    m.stats, **{name: getattr(m.stats, name) * f for name in _SCALED}
                )
                out.append(Measurement(m.config, Outcome.OK, times_ms=times, stats=stats))
            store.record_many(campaign, out)
            store.set_status(campaign, CampaignStatus.COMPLETE)
            print(f"  device {d + 1}/{devices} stored", file=sys.stderr, flush=True)


def rows_prior(store: Store, kernel: str, space: Any, fingerprint: str) -> Prior | None:
    """The prior as built before 2026-11-26: every result of every other device read into
    memory (for one problem; the benchmark's store has one)."""
    names = sorted(p.name for p in space.params)
    groups: dict[str, dict[int, float]] = {}
    for row in export_rows(store, kernel=kernel):
        if row.device_fingerprint == fingerprint or sorted(row.config) != names:
            continue
        times = groups.setdefault(row.device_fingerprint, {})
        if row.ok and row.median_ms is not None:
            i = space.index(row.config)
            if i is not None:
                times[i] = min(row.median_ms, times.get(i, np.inf))
    total, used = np.zeros(len(space)), 0
    for times in groups.values():
        if times:
            best = min(times.values())
            for i, t in times.items():
                total[i] += best / t
            used += 1
    return Prior(np.where(total > 0, total / used, np.nan), used) if used else None


def measure(db: Path, cache: Path, path: str, out: Path) -> None:
    """Build the prior one way (in this process) and write its time, peak RSS and scores."""
    imported = parse(cache)
    from perfport.space import Space
    from perfport.tune.replay import ReplayData

    with Store(db, create=False) as store:
        space = ReplayData.from_store(store, device=imported.device).space
        fingerprint = external_device(NEW_DEVICE).fingerprint
        started = time.perf_counter()
        if path == "sql":
            prior = transfer_prior(store, imported.kernel, space, fingerprint, imported.problem)
        elif path == "rows":
            prior = rows_prior(store, imported.kernel, space, fingerprint)
        else:
            prior = None
        seconds = time.perf_counter() - started
    assert isinstance(space, Space)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    scores = [] if prior is None else np.nan_to_num(prior.scores, nan=-1.0).tolist()
    out.write_text(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "scores": scores}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--devices", type=int, default=64)
    parser.add_argument("--db", type=Path, default=Path("/tmp/perfport-prior-scale.db"))
    parser.add_argument("--paths", default="sql,rows", help="which ways to build it (commas)")
    parser.add_argument("--smoke", action="store_true", help="seconds: 3 devices")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one way, this process
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cache = args.data / CACHE
    if args.measure:
        measure(args.db, cache, args.measure, args.out)
        return
    if args.smoke:
        args.devices, args.db = 3, Path(f"/tmp/perfport-prior-scale-smoke-{id(args)}.db")
    if not args.db.exists():
        started = time.perf_counter()
        build(args.db, cache, args.devices)
        print(f"built {args.db} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    with Store(args.db, create=False) as store:
        results = store.query("SELECT COUNT(*) FROM results")[0][0]
    print(f"{results} results of {args.devices} devices in {args.db}")
    print(f"{'path':10}{'seconds':>10}{'peak RSS MB':>14}")
    got = {}
    for path in ["startup", *args.paths.split(",")]:
        out = args.db.with_suffix(f".{path}.json")
        command = [sys.executable, __file__, "--measure", path, "--db", str(args.db)]
        subprocess.run([*command, "--data", str(args.data), "--out", str(out)], check=True)
        got[path] = json.loads(out.read_text())
        out.unlink()
        print(f"{path:10}{got[path]['seconds']:10.2f}{got[path]['peak_mb']:14.0f}")
    if "sql" in got and "rows" in got:
        same = np.allclose(got["sql"]["scores"], got["rows"]["scores"])
        print(f"the two priors agree: {same}")
    if args.smoke:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{args.db}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
