"""The report of a 20,000-result store: written in under 10 s, open in a browser in under 2 s.

    python benchmarks/report_open.py [--data ../shared/data] [--results 20000] [--rounds 3]
                                     [--smoke] [--json]

Builds a store of ``--results`` measurements from Kernel Tuner's GEMM cache (RTX 3090,
17,956 configurations: the first copy whole, a second copy, under another device name, for
the rest, so the report also has its across-devices sections), then per round:

- ``perfport report`` in a fresh process: its wall time (the 10 s goal);
- the page in headless Chromium (Debian's ``chromium``): the time from navigation start to
  the page's load event as the page itself reads it (``performance.now()`` in a load handler:
  parsed, styled, every inline SVG in the DOM), and the wall time of a Chromium process that
  opens the page and takes a screenshot (the page laid out and painted), beside the same for
  an empty page, whose difference is the page's own share (the 2 s goal).

Prints a table of the rounds, their medians and the ratio of the two Chromium times;
``--json`` prints the same as JSON; ``--smoke`` (2,000 results, one round) takes seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfport.store.formats.importing import parse
from store_scale import CACHE, add_copies

# Runs in the page's load handler: the page's own reading of how long it took to load.
STAMP = """<script>
addEventListener('load', function () {
  document.body.setAttribute('data-load-ms', performance.now().toFixed(1));
});
</script></body>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise SystemExit("no chromium on PATH: apt-get install -y chromium")
    return found


def open_page(page: Path, tmp: Path) -> tuple[float, float | None]:
    """(wall seconds of a headless Chromium that opens ``page`` and takes a screenshot,
    the page's load time in ms as it read it, or None for a page without the stamp)."""
    tmp.mkdir(exist_ok=True)
    started = time.perf_counter()
    done = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp}",
         "--window-size=1280,1600", f"--screenshot={tmp / 'shot.png'}", "--dump-dom",
         page.as_uri()],
        capture_output=True, text=True, timeout=300, cwd=tmp,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"chromium failed on {page}: {done.stderr.strip()[-300:]}")
    stamp = re.search(r'data-load-ms="([\d.]+)"', done.stdout)
    return wall, float(stamp.group(1)) if stamp else None


def one_round(db: Path, tmp: Path) -> dict[str, float]:
    out = tmp / "report"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "perfport", "report", "--db", str(db), "-o", str(out), "--json"],
        check=True, capture_output=True,
    )  # fmt: skip
    write_s = time.perf_counter() - started
    page = out / "index.html"
    head, _, tail = page.read_text().rpartition("</body>")
    page.write_text(head + STAMP + tail)
    blank_s, _ = open_page(tmp / "blank.html", tmp / "profile-blank")
    open_s, load_ms = open_page(page, tmp / "profile-page")
    assert load_ms is not None, "the page's load handler did not run"
    return {
        "write_s": write_s,
        "load_ms": load_ms,
        "open_s": open_s,
        "blank_open_s": blank_s,
        "page_share_s": open_s - blank_s,
        "page_MB": page.stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--results", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="seconds: 2,000 results, 1 round")
    args = parser.parse_args()
    if args.smoke:
        args.results, args.rounds = 2000, 1
    imported = parse(args.data / CACHE)
    whole = len(imported.measurements)
    if args.rounds < 1 or not 1 <= args.results <= 2 * whole:
        parser.error(f"give --rounds 1 or more and --results 1 to {2 * whole} (two copies)")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        db = tmp / "report.db"
        add_copies(db, dataclasses.replace(
            imported, measurements=imported.measurements[: args.results]), 0, 1)  # fmt: skip
        if args.results > whole:
            rest = imported.measurements[: args.results - whole]
            add_copies(db, dataclasses.replace(imported, measurements=rest), 1, 2)
        blank = tmp / "blank.html"
        blank.write_text("<!doctype html><html><body></body></html>")
        open_page(blank, tmp / "profile-warm")  # the first start reads Chromium from disk
        rounds = [one_round(db, tmp) for _ in range(args.rounds)]
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    if args.json:
        print(json.dumps({"results": args.results, "rounds": rounds, "median": medians}))
        return
    keys = list(medians)
    print(f"{args.results} results")
    print("| round | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for i, r in enumerate([*rounds, medians]):
        label = "median" if i == len(rounds) else str(i + 1)
        print(f"| {label} | " + " | ".join(f"{r[k]:.3f}" for k in keys) + " |")
    ratio = medians["open_s"] / medians["blank_open_s"]
    print(f"ratio open(report) / open(empty page): {ratio:.2f}")
    print("goals: write_s under 10 s; the page open in a browser under 2 s")


if __name__ == "__main__":
    main()
