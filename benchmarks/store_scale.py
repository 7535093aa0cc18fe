"""The results database at a million results: ``perfport results``, ``export`` and ``report``.

    python benchmarks/store_scale.py [--data ../shared/data] [--scales 1,4,16,64] [--smoke]

One Kernel Tuner GEMM cache (RTX 3090, 17,956 configurations) is parsed once and stored again
under one more device name per copy, through the store API (``Store.open_campaign`` and
``record_many``: ``perfport import`` keys a campaign by the file's content, so the same file
cannot be imported under many names). The store grows to each scale in turn (1x, 4x, 16x, 64x
copies; 64x is about 1.15M results) and at each ``results`` and ``export --format csv`` run in
a fresh process (``export --format json`` and ``report`` at the first scale only):
wall time and that process's peak RSS (``os.wait4``'s rusage) are printed. Goals at 64x:
``results`` under 3 s, ``export --format csv`` under 300 MB peak; ``report`` of one copy
(~18,000 results) under 10 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from perfport.space import PruningReport
from perfport.store import CampaignStatus, Store
from perfport.store.formats.imported import Imported, external_device
from perfport.store.formats.importing import parse

CACHE = "kerneltuner-benchmark_hub/gemm/RTX_3090.json.gz"


def add_copies(db: Path, imported: Imported, start: int, stop: int) -> None:
    """Store copies start..stop-1 of ``imported``, each as its own device and campaign."""
    with Store(db) as store:
        kernel_id = store.external_kernel_id(imported.kernel, imported.format, imported.params)
        problem_id = store.problem_id(imported.problem)
        report = PruningReport(len(imported.measurements), len(imported.measurements), ())
        for i in range(start, stop):
            device_id = store.device_id(external_device(f"{imported.device} copy {i}"))
            campaign = store.open_campaign(
                f"scale-{i}", (device_id, kernel_id, problem_id), "imported", 0, {}, report
            )
            store.record_many(campaign, imported.measurements)
            store.set_status(campaign, CampaignStatus.COMPLETE)


# Run in a small launcher process: Linux carries the peak RSS of a process's memory image
# across exec, so a command started straight from this (large) script would report this
# script's peak; the launcher's own image is small, and it reports its child's rusage.
LAUNCHER = """
import os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = child.stderr.read().decode()
_, status, usage = os.wait4(child.pid, 0)
code = os.waitstatus_to_exitcode(status)
print(code, time.perf_counter() - started, usage.ru_maxrss, err.strip()[-300:], file=sys.stderr)
"""


def measure(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one perfport command in its own process."""
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "perfport", *argv],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    code, seconds, rss_kib, *err = done.stderr.split(maxsplit=3)
    if int(code):
        raise SystemExit(f"perfport {' '.join(argv)} failed: {' '.join(err)}")
    return float(seconds), int(rss_kib) / 1024  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--scales", default="1,4,16,64", help="copies of the cache, ascending")
    parser.add_argument("--smoke", action="store_true", help="seconds: 2,000 results, 1x and 2x")
    parser.add_argument("--keep", type=Path, help="build the store here and keep it")
    args = parser.parse_args()
    imported = parse(args.data / CACHE)
    scales = [int(s) for s in args.scales.split(",")]
    if args.smoke:
        imported = dataclasses.replace(imported, measurements=imported.measurements[:2000])
        scales = [1, 2]
    with tempfile.TemporaryDirectory() as tmp:
        db = args.keep or Path(tmp) / "scale.db"
        print("| copies | results | MB on disk | command | seconds | peak RSS MB |")
        print("|---|---|---|---|---|---|")
        built = 0
        for scale in scales:
            add_copies(db, imported, built, scale)
            built = scale
            n = scale * len(imported.measurements)
            size = db.stat().st_size / 1e6
            commands = {
                "results": ["results", "--db", str(db), "--json"],
                "export csv": ["export", "--db", str(db), "--format", "csv", "-o", os.devnull],
            }
            if scale == scales[0]:  # JSON export streams as CSV does; the report reads 1x
                commands["export json"] = ["export", "--db", str(db), "--format", "json",
                                           "-o", os.devnull]  # fmt: skip
                out = str(Path(tmp) / "report")
                commands["report"] = ["report", "--db", str(db), "-o", out, "--json"]
            for label, argv in commands.items():
                seconds, rss = measure(argv)
                print(f"| {scale} | {n} | {size:.0f} | {label} | {seconds:.2f} | {rss:.0f} |")
        print("goals at 64x: results under 3 s, export under 300 MB; report of 1x under 10 s")


if __name__ == "__main__":
    main()
