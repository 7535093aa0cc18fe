"""Work-group-size data collection: exhaustive campaigns over many stencil scenarios.

Each scenario (``perfport.wg.scenarios``: a stencil kernel and its problem) is tuned by
brute force over every legal work-group size on one device and stored as its own campaign, so
an interrupted collection resumes where it stopped. Refused sizes are stored with their
outcome like any other result.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfport._core import DeviceInfo, KernelSpec, PerfportError
from perfport.kernels import builtin
from perfport.measure import RunSettings, Timing
from perfport.tune import Gold, sweep
from perfport.wg.scenarios import Scenario


@dataclass(frozen=True)
class CollectProgress:
    scenario: Scenario
    measured: int
    outcomes: dict[str, int]
    seconds: float


def collect(
    device: DeviceInfo,
    chosen: Sequence[Scenario],
    db: str | Path,
    repeats: int = 5,
    max_seconds: float | None = None,
    rounds: int = 1,
    sizes: Sequence[tuple[int, int]] | None = None,
) -> Iterator[CollectProgress]:
    """Measure every legal work-group size of each scenario (one warm-up and ``repeats`` timed
    launches in each of ``rounds`` interleaved rounds: ``perfport.tune.sweep``); yields after
    each one. Runs of scenarios of the same kernel share one device session and its builds (a
    sweep); every size is verified against the output of the default size, w(32x4), the first
    time its build runs (the numpy references cost more than the sweep at large sizes and
    borders; tests check them against the kernels). Starts no scenario after ``max_seconds``.
    ``sizes`` (``(wc, wr)`` pairs) measures only those work-group sizes (a candidate set, e.g.
    ``covering_sizes``): the others are left out of the campaign, as sizes a device refuses
    are, and a dataset built from it has them as NaN."""
    started = time.monotonic()
    settings = RunSettings(timing=Timing.fixed(repeats))
    for kernel, group in itertools.groupby(chosen, key=lambda s: s.kernel):
        runs = list(group)
        left = None if max_seconds is None else max_seconds - (time.monotonic() - started)
        if left is not None and left <= 0:
            return
        steps = sweep(
            candidates(builtin(kernel), sizes), [dict(s.problem) for s in runs], device=device, db=db,
            settings=settings, max_seconds=left, gold=Gold.DEFAULT_CONFIG, rounds=rounds,
        )  # fmt: skip
        for scenario, step in zip(runs, steps, strict=False):
            yield CollectProgress(scenario, step.measured, step.outcomes, step.seconds)


def candidates(spec: KernelSpec, sizes: Sequence[tuple[int, int]] | None) -> KernelSpec:
    """``spec`` with its work-group sizes restricted to ``sizes`` (None: all). The restriction
    is not part of the code's identity (``source_hash``), so the results are the kernel's."""
    if sizes is None:
        return spec
    if not sizes:
        raise PerfportError("a candidate set needs at least one work-group size")
    # One integer per pair keeps the restriction a plain membership test.
    keys = ", ".join(str(int(wc) * _KEY + int(wr)) for wc, wr in sorted(set(sizes)))
    rule = f"wc * {_KEY} + wr in ({keys},)"
    return dataclasses.replace(spec, restrictions=(*spec.restrictions, rule))


_KEY = 1 << 16  # above any work-group dimension
