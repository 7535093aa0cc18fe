"""Leave-one-device-out: the honest score of a configuration set for every GPU. For each
method, held-out device and k, the set is chosen on the other devices' caches
(``perfport.select.across_devices``) and scored by the held-out device's fraction of its own
optimum; ``loo_markdown`` tabulates the result."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfport._core.containers import as_list
from perfport._core.stats import floored_geomean
from perfport.select.across_devices import Method, choose_for_devices
from perfport.select.device_caches import DeviceTimes, load_caches
from perfport.select.errors import SelectError
from perfport.select.normalise import relative
from perfport.select.prune import GEOMEAN_FLOOR

DEFAULT_LOO_KS = tuple(range(1, 9))


@dataclass(frozen=True)
class LooRow:
    """One method, k and held-out device: the held-out device's fraction of its optimum."""

    method: str
    k: int
    holdout: str
    fraction: float


def leave_one_out(
    files: Sequence[str | Path] | DeviceTimes,
    ks: Iterable[int] = DEFAULT_LOO_KS,
    methods: Iterable[Method | str] = tuple(Method),
    seed: int = 0,
) -> list[LooRow]:
    """For each method, held-out device and k: choose k configurations on the other devices
    and report the held-out device's fraction of its own optimum."""
    data = files if isinstance(files, DeviceTimes) else load_caches(files)
    if len(data.devices) < 2:
        raise SelectError("leave-one-device-out needs caches of at least 2 devices")
    ks = sorted(set(as_list(ks, "ks", SelectError)))
    perf = relative(data.times)
    rows = []
    for method in map(Method, as_list(methods, "methods", SelectError)):
        for held, device in enumerate(data.devices):
            for k in ks:
                chosen = choose_for_devices(data, k, held, method, seed)
                rows.append(LooRow(method.value, k, device, float(perf[held, chosen].max())))
    return rows


def loo_markdown(rows: Sequence[LooRow]) -> str:
    """A markdown table: per method, one line per held-out device and a geometric-mean line
    over held-out devices; one column per k."""
    ks = sorted({r.k for r in rows})
    cell = {(r.method, r.holdout, r.k): r.fraction for r in rows}
    lines = [
        "| method | held-out device | " + " | ".join(f"k={k}" for k in ks) + " |",
        "|---|---|" + "---:|" * len(ks),
    ]
    for method in dict.fromkeys(r.method for r in rows):
        devices = list(dict.fromkeys(r.holdout for r in rows if r.method == method))
        for device in devices:
            values = [cell.get((method, device, k), math.nan) for k in ks]
            lines.append(
                f"| {method} | {device} | " + " | ".join(f"{v:.3f}" for v in values) + " |"
            )
        means = [
            floored_geomean(np.array([cell[method, d, k] for d in devices]), GEOMEAN_FLOOR)
            for k in ks
        ]
        lines.append(
            f"| **{method}** | **geomean** | " + " | ".join(f"**{v:.3f}**" for v in means) + " |"
        )
    return "\n".join(lines) + "\n"
