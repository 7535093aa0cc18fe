"""Work-group-size data collection: exhaustive campaigns over many stencil scenarios.

Each scenario (a stencil kernel and its problem: size, borders, types, complexity) is tuned by
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
from typing import Any

import numpy as np

from perfport._core import DeviceInfo
from perfport.kernels import builtin
from perfport.measure import RunSettings, Timing
from perfport.tune.sweep import Gold, sweep

SIZES = (512, 1024, 2048, 4096)
REAL_WORLD = ("gaussian", "gol", "heat", "nms", "sobel", "threshold")
BORDERS = (0, 1, 2, 3, 5, 10, 20, 30)


@dataclass(frozen=True)
class Scenario:
    kernel: str
    problem: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        return f"{self.kernel} " + " ".join(f"{k}={v}" for k, v in self.problem)


def scenarios(
    count: int,
    sizes: Sequence[int] = SIZES,
    seed: int = 0,
    max_border: int = 30,
    real_world: bool = True,
) -> list[Scenario]:
    """The real-world kernels at every size (gaussian at radii 1, 3 and 5; left out with
    ``real_world=False``), then synthetic ones with random borders (each way one of
    ``BORDERS`` up to ``max_border``), types and complexity, up to ``count`` in all.

    The defaults give the list of the first shipped collections. Borders drawn independently
    from 0-30 make a stencil with all four at most 2 wide (what most real stencils are) a
    2% event, so ``max_border=5`` collects that region on purpose."""
    sizes = tuple(dict.fromkeys(sizes))  # a size given twice is one size
    borders_from = tuple(b for b in BORDERS if b <= max_border)
    if not borders_from:
        raise ValueError(f"max_border {max_border}: borders are 0 or more")
    out: list[Scenario] = []
    for name, size in itertools.product(REAL_WORLD if real_world else (), sizes):
        radii = (1, 3, 5) if name == "gaussian" else (None,)
        for r in radii:
            problem = {"width": size, "height": size} | ({"radius": r} if r is not None else {})
            out.append(Scenario(name, tuple(sorted(problem.items()))))
    rng = np.random.default_rng(seed)
    types = (
        ("float", "same"),
        ("double", "same"),
        ("int", "same"),
        ("int", "float"),
        ("float", "double"),
    )
    distinct = len(sizes) * len(borders_from) ** 4 * len(types) * 2
    if count - len(out) > distinct:
        raise ValueError(
            f"{count} scenarios asked for, but these sizes and borders give only "
            f"{len(out) + distinct}; ask for fewer, or give more sizes or a larger border limit"
        )
    seen: set[tuple[tuple[str, Any], ...]] = set()
    while len(out) < count:
        size = int(rng.choice(sizes))
        borders = {k: int(rng.choice(borders_from)) for k in ("north", "south", "east", "west")}
        dtype, out_dtype = types[int(rng.integers(len(types)))]
        problem = {
            "width": size,
            "height": size,
            "dtype": dtype,
            "out_dtype": out_dtype,
            "complex": bool(rng.integers(2)),
            **borders,
        }
        key = tuple(sorted(problem.items()))
        if key not in seen:
            seen.add(key)
            out.append(Scenario("synthetic", key))
    return out[:count]


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
