"""Leave-one-device-out for configurations shipped to every GPU (issue 5, part 5).

    python experiments/2026-11-22-select-portable/select_portable.py [--data ../shared/data] [--ks 1-8] [--out FILE.md]
        [--reach 0.9] [--add KERNEL=CACHE ...]

Kernels and the caches pooled for each (only caches with identical parameter sets can be
pooled; see kerneltuner-benchmark_hub/PROVENANCE.md):
- GEMM (CLBlast Xgemm 4096^2): gemm/RTX_2080_Ti, gemm/RTX_3090.
- Convolution (4096^2, 15x15 filter): convolution_milo/A100, A4000, MI250X. The older
  convolution space (convolution/RTX_3090, no use_shmem/use_cmem) has one device only.
``--add convolution=FILE`` pools one more cache into a kernel's devices, e.g. perfport's own
convolution2d measured on a new GPU (data/convolution2d/h100-cuda.json.gz).

Per method, held-out device and k, the held-out GPU's fraction of its own optimum reached by
the best of the k configurations chosen on the other GPUs; per method a geometric mean over
held-out GPUs. The issue's goal: at k = 8 a geometric mean of at least 0.90; Kernel Tuner's
most-often-best single configuration is quoted at about 0.81 (GEMM) and 0.85 (convolution).

Then, per held-out device, what the goal asks of it: the fraction of its optimum it needs for
the geometric mean over held-out devices to reach ``--reach`` when the others keep their k = 8
value (portable method), how many configurations reach that on it, and how the other devices
rank the best of those (1 = that device's own optimum): if every other device ranks them far
down, no choice made on the other devices alone can be expected to ship one.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from perfport.select.across_devices_holdout import LooRow, leave_one_out, loo_markdown
from perfport.select.device_caches import DeviceTimes, load_caches
from perfport.select.errors import SelectError
from perfport.select.normalise import relative

KERNELS = {
    "GEMM": ("gemm", ("RTX_2080_Ti", "RTX_3090")),
    "convolution": ("convolution_milo", ("A100", "A4000", "MI250X")),
}


def main(argv: Sequence[str] | None = None) -> None:
    here = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=here.parent / "shared" / "data")
    parser.add_argument("--ks", default="1-8", help="a range like 1-8")
    parser.add_argument("--out", type=Path, help="also write the markdown tables here")
    parser.add_argument("--reach", type=float, default=0.9, help="the goal's geometric mean")
    parser.add_argument(
        "--add", action="append", default=[], metavar="KERNEL=CACHE",
        help="pool one more Kernel Tuner cache into a kernel's devices (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    ks = _ks(parser, args.ks)
    if not 0 < args.reach <= 1:  # also refuses NaN; log(reach) below needs it positive
        parser.error(f"--reach {args.reach}: give a geometric mean in (0, 1], like 0.9")
    if args.out is not None and not args.out.parent.is_dir():  # before minutes of work
        parser.error(f"--out {args.out}: no folder {args.out.parent}; create it first")
    # Every kernel's caches are loaded (and refused) before any leave-one-out runs.
    pooled = {kernel: _load(parser, args.data, kernel, files)
              for kernel, files in _added(parser, args.add).items()}  # fmt: skip
    # Each k is a greedy choice per held-out device: a huge range would run for days.
    for kernel, (data, _) in pooled.items():
        if ks[-1] > len(data.configs):
            parser.error(
                f"--ks {args.ks}: {kernel} has only {len(data.configs)} configurations; "
                "ship at most that many"
            )
    text = []
    for kernel, (data, load_s) in pooled.items():
        started = time.perf_counter()
        rows = leave_one_out(data, ks)
        seconds = load_s + time.perf_counter() - started
        text.append(
            f"### {kernel}: {len(data.devices)} devices, {len(data.configs)} configurations "
            f"({seconds:.1f} s)\n\n{loo_markdown(rows)}\n{_needs(data, rows, args.reach)}"
        )
    print("\n".join(text))
    if args.out:
        try:
            args.out.write_text("\n".join(text))
        except OSError as exc:
            parser.error(f"--out {args.out}: cannot be written ({exc.strerror})")


def _ks(parser: argparse.ArgumentParser, text: str) -> range:
    """``--ks LO-HI`` (or one k) as a range, from 1 and low to high."""
    # ASCII digits only: str.isdigit() also passes "²", which int() refuses.
    match = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", text.strip())
    lo, hi = (int(match[1]), int(match[2] or match[1])) if match else (0, 0)
    if not 1 <= lo <= hi:
        parser.error(f"--ks {text!r}: give a range like 1-8 (from 1, low to high)")
    return range(lo, hi + 1)


def _added(parser: argparse.ArgumentParser, items: Sequence[str]) -> dict[str, list[Path]]:
    """The ``--add KERNEL=CACHE`` files by kernel, every kernel present (maybe with none)."""
    added: dict[str, list[Path]] = {kernel: [] for kernel in KERNELS}
    for item in items:
        kernel, sep, path = item.partition("=")
        if not sep or kernel not in KERNELS or not path.strip():
            parser.error(f"--add {item!r}: give KERNEL=CACHE with KERNEL one of {list(KERNELS)}")
        added[kernel].append(Path(path))
    return added


def _load(
    parser: argparse.ArgumentParser, data: Path, kernel: str, added: list[Path]
) -> tuple[DeviceTimes, float]:
    """A kernel's hub caches and its added ones pooled, and the seconds that took."""
    started = time.perf_counter()
    folder, devices = KERNELS[kernel]
    hub = data / "kerneltuner-benchmark_hub" / folder
    try:  # load_caches refuses a file given twice (an --add of a hub cache), among others
        pooled = load_caches([hub / f"{d}.json.gz" for d in devices] + added)
    except SelectError as exc:
        parser.error(f"{kernel}: {exc}")
    return pooled, time.perf_counter() - started


def _needs(data: DeviceTimes, rows: list[LooRow], reach: float) -> str:
    """Per held-out device: what it needs for the goal and where the configurations that give
    it rank on the other devices."""
    top = max(r.k for r in rows)
    kept = {r.holdout: r.fraction for r in rows if r.method == "portable" and r.k == top}
    perf = relative(data.times)
    ran = np.isfinite(data.times)
    lines = [
        f"| held-out device | needs (geomean {reach} at k={top}) | has | configurations reaching "
        "it | best of those on each other device: rank (fraction) |",
        "|---|---:|---:|---:|---|",
    ]
    for d, device in enumerate(data.devices):
        others = [o for o in range(len(data.devices)) if o != d]
        rest = sum(math.log(max(kept[data.devices[o]], 1e-3)) for o in others)
        need = math.exp(len(data.devices) * math.log(reach) - rest)
        good = np.flatnonzero((perf[d] >= need) & ran[others].all(axis=0))
        cells = []
        for o in others:
            if len(good) == 0:
                break
            order = np.argsort(-perf[o], kind="stable")
            rank = np.empty(len(order), dtype=int)
            rank[order] = np.arange(1, len(order) + 1)
            best = good[np.argmin(rank[good])]
            cells.append(f"{data.devices[o]}: {rank[best]} ({perf[o, best]:.3f})")
        lines.append(
            f"| {device} | {min(need, 1.0):.3f}{'' if need <= 1 else ' (impossible)'} | "
            f"{kept[device]:.3f} | {len(good)} | {'; '.join(cells) or '-'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
