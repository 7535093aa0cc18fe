"""Work-group-size data collection: exhaustive campaigns over many stencil scenarios.

Each scenario (``perfport.wg.scenarios``: a stencil kernel and its problem) is tuned by
brute force over every legal work-group size on one device and stored as its own campaign, so
an interrupted collection resumes where it stopped. Refused sizes are stored with their
outcome like any other result.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfport._core import DeviceInfo
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
) -> Iterator[CollectProgress]:
    """Measure every legal work-group size of each scenario (one warm-up and ``repeats`` timed
    launches in each of ``rounds`` interleaved rounds: ``perfport.tune.sweep``); yields after
    each one. Runs of scenarios of the same kernel share one device session and its builds (a
    sweep); every size is verified against the output of the default size, w(32x4), the first
    time its build runs (the numpy references cost more than the sweep at large sizes and
    borders; tests check them against the kernels). Starts no scenario after ``max_seconds``."""
    started = time.monotonic()
    settings = RunSettings(timing=Timing.fixed(repeats))
    for kernel, group in itertools.groupby(chosen, key=lambda s: s.kernel):
        runs = list(group)
        left = None if max_seconds is None else max_seconds - (time.monotonic() - started)
        if left is not None and left <= 0:
            return
        steps = sweep(
            builtin(kernel), [dict(s.problem) for s in runs], device=device, db=db,
            settings=settings, max_seconds=left, gold=Gold.DEFAULT_CONFIG, rounds=rounds,
        )  # fmt: skip
        for scenario, step in zip(runs, steps, strict=False):
            yield CollectProgress(scenario, step.measured, step.outcomes, step.seconds)
