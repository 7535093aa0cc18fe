"""What an imported file becomes before it is stored: one device, kernel and problem with its
measurements; and the checks that every importer applies to values from another tool."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from perfport._core import (
    Backend,
    DeviceInfo,
    DeviceType,
    Measurement,
    Problem,
    StoreError,
)


@dataclass(frozen=True)
class Imported:
    """A parsed file, ready to store: one device, kernel and problem."""

    format: str
    device: str
    kernel: str
    problem: Problem
    params: dict[str, list[Any]]  # the tuning parameters and their values
    measurements: tuple[Measurement, ...]
    # The problem releases before 2026-11-27 stored this file under, where it differs
    # (perfport's own kt-cache export: problem_size alone), so that importing it again adds
    # nothing after an upgrade either.
    earlier_problem: Problem | None = None
    # What the campaign's settings keep of the file beyond its problem: a Kernel Tuner cache's
    # problem_size as written (the problem holds a list only as "AxB" text), which its
    # export writes back.
    settings: dict[str, Any] = field(default_factory=dict)
    # What the file's tuning ranked by ("GFLOP/s"); perfport imports its times and ranks by them.
    objective: str = "time"

    @property
    def failed(self) -> int:
        return sum(not m.ok for m in self.measurements)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "device": self.device,
            "kernel": self.kernel,
            "problem": dict(self.problem),
            "configs": len(self.measurements),
            "failed": self.failed,
            "objective": self.objective,
        }


def objective_note(path: str, objective: str) -> str | None:
    """What an import tells where the file's tuning ranked by something other than time
    (None where it ranked by time): perfport keeps the times and ranks by them."""
    if objective == "time":
        return None
    return (
        f"{path}: its tuning ranked by {objective[:40]!r}; perfport imports its times and ranks "
        "by time, which gives the same order only where that is computed from the time and "
        "work every configuration shares (GFLOP/s of one problem, no padding)"
    )


def external_device(name: str) -> DeviceInfo:
    """A device known only by name from someone else's data."""
    upper = name.upper()
    vendor = "NVIDIA" if "NVIDIA" in upper or "RTX" in upper or "GTX" in upper else (
        "AMD" if any(s in upper for s in ("AMD", "RADEON", "MI1", "MI2", "MI3")) else "unknown"
    )  # fmt: skip
    return DeviceInfo(
        id=f"external:{name}",
        backend=Backend.EXTERNAL,
        name=name,
        vendor=vendor,
        type=DeviceType.GPU,
        driver="",
        platform="imported",
        version="",
        compute_units=0,
        max_work_group_size=0,
        max_work_item_sizes=(),
        local_mem_bytes=0,
        global_mem_bytes=0,
    )


def malformed(path: str, what: str) -> StoreError:
    return StoreError(f"{path}: {what}; the file is malformed and nothing was imported")


def plain(value: Any, path: str, what: str) -> Any:
    """A value the store can hold in a configuration: a boolean, integer, string or finite
    float (not a list, nor null)."""
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return value
    raise malformed(path, f"{what} {str(value)[:40]!r} is not a plain value")


def finite_ms(value: Any) -> float | None:
    """A number of milliseconds as a float, or None for anything else (a string, a boolean,
    NaN, an integer too large for a float)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        ms = float(value)
    except OverflowError:
        return None
    return ms if math.isfinite(ms) else None


def run_times(values: Any) -> tuple[tuple[float, ...], str | None]:
    """Timed runs in ms, or why ``values`` is not a list of them. A time of 0 is refused with
    the negative ones: no run takes no time, so it is a timer's failure, not a measurement
    (replay and select would drop it and call the next best the optimum)."""
    if not isinstance(values, list):
        return (), "must be a list of times"
    out = []
    for v in values:
        ms = finite_ms(v)
        if ms is None or ms < 0:
            return (), f"holds {str(v)[:40]!r}, not a time in ms"
        if ms == 0:
            return (), f"holds {str(v)[:40]!r}: no run takes 0 ms, so it is not a measurement"
        out.append(ms)
    return tuple(out), None
