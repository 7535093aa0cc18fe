"""Opening a large store: ``perfport results`` with the incremental value check against the
same command with every row checked (what each open did before the marks).

    python benchmarks/store_open.py [--data ../shared/data] [--copies 64] [--keep PATH] [--smoke]

The store is built as in ``store_scale.py`` (one GEMM cache stored once per copy through the
store API; 64 copies are about 1.15M results), or reused from ``--keep`` when it exists. Each
command runs three times in a fresh process; the medians and their ratio are printed. Goal:
``perfport results`` under 3 s at 64 copies.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfport.store.formats.importing import parse
from store_scale import CACHE, add_copies

# 'perfport results' as the CLI runs it, with the open's check of every row added (the
# behaviour before the marks): the same process, the same query.
FULL = """
import sys
from perfport.cli import main
from perfport.store import Store
real = Store.__init__
def checking(self, *a, **k):
    real(self, *a, **k)
    self.check_everything()
Store.__init__ = checking
sys.exit(main(["results", "--db", sys.argv[1], "--json"]))
"""


def seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--copies", type=int, default=64)
    parser.add_argument("--keep", type=Path, help="build the store here (or reuse it)")
    parser.add_argument("--smoke", action="store_true", help="seconds: 2 copies of 2,000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.keep or Path(tmp) / "open.db"
        if not db.exists():
            imported = parse(args.data / CACHE)
            if args.smoke:
                imported = dataclasses.replace(imported, measurements=imported.measurements[:2000])
            add_copies(db, imported, 0, 2 if args.smoke else args.copies)
        commands = {
            "results (incremental check)": [sys.executable, "-m", "perfport", "results",
                                            "--db", str(db), "--json"],
            "results (every row checked)": [sys.executable, "-c", FULL, str(db)],
        }  # fmt: skip
        runs = {label: [seconds(argv) for _ in range(3)] for label, argv in commands.items()}
        medians = {label: statistics.median(times) for label, times in runs.items()}
        size = db.stat().st_size / 1e6
        print(f"store: {db} ({size:.0f} MB)")
        print("| command | runs (s) | median (s) |")
        print("|---|---|---|")
        for label, times in runs.items():
            print(f"| {label} | {', '.join(f'{t:.2f}' for t in times)} | {medians[label]:.2f} |")
        new, old = medians.values()
        print(f"every-row / incremental: {old / new:.1f}x; goal: results under 3 s")


if __name__ == "__main__":
    main()
