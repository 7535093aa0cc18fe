"""Configurations to ship for every GPU, including GPUs not in the data (issue 5, part 5).

Lawson's pipeline chooses k configurations that serve every problem size of one device. Here
the varying input is the device: from Kernel Tuner caches of one kernel on several GPUs,
choose k configurations so that a new GPU, measuring only those k and keeping the best, gets
close to its own optimum. ``leave_one_out`` (``perfport.select.across_devices_holdout``)
scores that promise honestly: the set is chosen without a device and scored on it. The caches
are read and joined by ``perfport.select.device_caches``.

Only configurations that ran on
every *training* device are shipped: a configuration known to fail on some GPU is a liability
to ship (on the convolution caches, 167 of 4362 fail somewhere, none of them a device's
optimum). The held-out device's failures are not used for the choice (that would leak the
answer); a shipped configuration that fails there scores 0, floored at ``GEOMEAN_FLOOR`` in a
geometric mean.

Methods (``Method``):

- ``portable`` (the default): greedily add the configuration that most raises the geometric
  mean over training devices of the best fraction within the set. Once that stops rising
  (each training device already has its optimum in the set, at the latest at k = number of
  training devices), spend the remaining slots on diversity: among configurations within
  ``CUTOFF`` (90%) of the best training geometric mean, the one whose parameters differ
  (Hamming distance) most from everything chosen. A new GPU's optimum tends to sit in another
  region of the space than the known GPUs' (another tile shape, shared memory on or off), and
  near-duplicates of a known optimum cannot reach it. In leave-one-device-out on the Kernel
  Tuner caches (``benchmarks/select_portable.py``) this kept the held-out GPU at a geometric
  mean of 0.94 (GEMM, k >= 4) and 0.87 (convolution, k >= 5); at k = 4 the variants below
  reach 0.76 / 0.47 (``greedy_geomean``) and 0.75 / 0.41 (``clustered``).
- ``greedy_geomean``: the same greedy without the diversity fill; once saturated, the next
  configurations are the best remaining by training geometric mean.
- ``clustered``: perfport's ``choose`` with k-means over devices (``Pruning.KMEANS``), then
  its own greedy fill. With fewer devices than k, k-means has too few rows to say much.
- ``most_often_best``: Kernel Tuner's "most often best": the configuration that is the optimum
  of the most training devices, ties by training geometric mean (``Pruning.TOP_N``). It is a
  single-configuration baseline; for k > 1 the next most often best are added the same way.
- ``greedy_mean``: the issue's comparison baseline: greedy on the arithmetic mean of the best
  fraction within the set (ties and saturation as in ``greedy_geomean``).

Two methods choose for robustness rather than for the mean of the known devices:

- ``maximin``: greedily raise the *worst* training device's best fraction within the set
  (ties to the geometric mean), so that no known device is sacrificed for the others; once
  every training device has its optimum, the diversity fill of ``portable``.
- ``perturbed``: the expected geometric mean over devices that *might* exist: besides the
  training devices, ``PERTURBED_DEVICES`` synthetic ones, each a training device whose
  preference for every parameter value is shifted by a random factor (log-normal, its width
  the spread between the training devices of each value's best configuration, so a parameter
  the known GPUs disagree on moves more). Greedy on the mean over real and synthetic devices
  (half the weight each) of the log best fraction within the set. A set good for the
  synthetic devices covers regions (other values of the parameters) where a new GPU's best
  might lie. Seeded, deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.containers import as_list
from perfport._core.stats import floored_geomean
from perfport.select.device_caches import DeviceTimes, load_caches, same_file
from perfport.select.errors import SelectError
from perfport.select.normalise import CUTOFF, relative
from perfport.select.prune import GEOMEAN_FLOOR, Pruning, choose

# A rise of the training geometric mean smaller than this (in log space) counts as "stopped
# rising": it is below what repeated timings of one configuration can resolve.
SATURATION = 1e-9
PERTURBED_DEVICES = 256  # synthetic devices of the ``perturbed`` method


class Method(Enum):
    PORTABLE = "portable"
    GREEDY_GEOMEAN = "greedy_geomean"
    CLUSTERED = "clustered"
    MOST_OFTEN_BEST = "most_often_best"
    GREEDY_MEAN = "greedy_mean"
    MAXIMIN = "maximin"
    PERTURBED = "perturbed"


@dataclass(frozen=True)
class PortableResult:
    """k configurations to ship. ``per_device`` is each device's fraction of its own optimum
    reached by the best of the k (training devices and the held-out one, if any); ``geomean``
    is the geometric mean over every device in ``per_device``, held-out one included (a
    failure counts as ``GEOMEAN_FLOOR``). ``holdout`` names the held-out device, if any."""

    k: int
    configs: tuple[dict[str, Any], ...]
    per_device: dict[str, float]
    geomean: float
    holdout: str | None = None
    fixed: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"k", "configs", "per_device", "geomean", "fixed", "holdout"}``: the output of
        ``perfport select portable --json``; ``fixed`` holds the parameters every cache fixes
        at one value, left out of ``configs`` (they are not a choice); ``holdout`` is the
        held-out device's key in ``per_device`` (null without one)."""
        return {
            "k": self.k,
            "configs": [dict(c) for c in self.configs],
            "per_device": dict(self.per_device),
            "geomean": self.geomean,
            "fixed": dict(self.fixed),
            "holdout": self.holdout,
        }


def portable(
    files: Sequence[str | Path] | DeviceTimes,
    k: int,
    holdout: str | Path | None = None,
    method: Method | str = Method.PORTABLE,
    seed: int = 0,
) -> PortableResult:
    """Choose ``k`` configurations of one kernel to ship for every GPU, from Kernel Tuner caches
    (paths, or ``load_caches``' result). ``holdout`` (a file, which need not be among
    ``files``, or a device name) is left out of the choice and scored like the others; the
    geometric mean covers every device reported, the held-out one included."""
    if k < 1:
        raise SelectError(f"the number of configurations to ship must be at least 1, got {k}")
    if not isinstance(files, DeviceTimes):
        paths = list(as_list(files, "files", SelectError))
        # A holdout file not among ``files`` joins them; otherwise it names one of them (by
        # path or device name).
        if (
            holdout is not None
            and Path(holdout).is_file()
            and not any(str(holdout) == str(p) or same_file(Path(holdout), Path(p)) for p in paths)
        ):
            paths.append(holdout)
        data = load_caches(paths)
    else:
        data = files
    if k > len(data.configs):
        raise SelectError(
            f"k = {k}: the caches have {len(data.configs)} configurations; ship at most that many"
        )
    held = None if holdout is None else data.device_index(holdout)
    chosen = choose_for_devices(data, k, held, Method(method), seed)
    perf = relative(data.times)
    fractions = perf[:, chosen].max(axis=1)
    per_device = {d: float(f) for d, f in zip(data.devices, fractions, strict=True)}
    return PortableResult(
        k=len(chosen),
        configs=tuple(data.config_dict(int(c)) for c in chosen),
        per_device=per_device,
        geomean=floored_geomean(fractions, GEOMEAN_FLOOR),
        holdout=None if held is None else data.devices[held],
        fixed=data.fixed,
    )


def choose_for_devices(
    data: DeviceTimes, k: int, held: int | None, method: Method, seed: int
) -> list[int]:
    train = [d for d in range(len(data.devices)) if d != held]
    if not train:
        raise SelectError("holding out the only device leaves nothing to choose from; add caches")
    times = data.times[train]
    runs_everywhere = np.flatnonzero(np.isfinite(times).all(axis=0))
    if len(runs_everywhere) == 0:
        raise SelectError(
            "no configuration ran on every training device; check that the caches are of the "
            "same kernel and problem size"
        )
    # Each device's optimum comes from all its configurations, but only ones that ran on every
    # training device are candidates.
    norm = relative(times)[:, runs_everywhere]
    picks = _METHODS[method](norm, min(k, norm.shape[1]), seed, data, runs_everywhere)
    return [int(runs_everywhere[p]) for p in picks]


def _greedy(norm: np.ndarray, k: int, geometric: bool) -> list[int]:
    """Greedy maximisation of the mean (geometric or arithmetic) over devices of the best
    value within the set; once no configuration raises it, the best remaining by the mean."""
    values = np.log(np.maximum(norm, GEOMEAN_FLOOR)) if geometric else norm
    single = values.mean(axis=0)
    chosen: list[int] = []
    best = np.full(len(norm), -np.inf)
    while len(chosen) < k:
        if chosen:
            score = np.maximum(best[:, None], values).mean(axis=0)
            score[chosen] = -np.inf
            if score.max() <= best.mean() + SATURATION:
                score = single.copy()
                score[chosen] = -np.inf
        else:
            score = single
        pick = int(np.argmax(score))  # ties: the lowest column, i.e. the smallest parameters
        chosen.append(pick)
        best = np.maximum(best, values[:, pick])
    return chosen


def _codes(data: DeviceTimes, cols: np.ndarray) -> np.ndarray:
    """Parameter values as small integer codes (columns x parameters), so that a Hamming
    distance is a count of differing parameters whatever their types."""
    configs = np.array([data.configs[c] for c in cols], dtype=object)
    return np.column_stack(
        [
            np.unique(configs[:, j].astype(str), return_inverse=True)[1]
            for j in range(len(configs[0]))
        ]
    )


def _spread_greedy(
    norm: np.ndarray,
    k: int,
    data: DeviceTimes,
    cols: np.ndarray,
    propose: Callable[[np.ndarray, np.ndarray, list[int]], int | None],
) -> list[int]:
    """Greedy choice of ``k`` configurations: ``propose(logs, best, chosen)`` picks the next
    one from the log fractions and the best of each device within the set so far, or returns
    None once nothing it can add helps; then the most different good configuration fills the
    slot instead (diversity for devices not in the data)."""
    logs = np.log(np.maximum(norm, GEOMEAN_FLOOR))
    single = logs.mean(axis=0)
    codes = _codes(data, cols)
    good = single >= single.max() + math.log(CUTOFF)
    chosen: list[int] = []
    best = np.full(len(norm), -np.inf)
    # Each configuration's fewest differing parameters to any chosen one, kept as picks come
    # (recomputed against the whole set each time, k = 800 took 50 s).
    nearest = np.full(len(codes), codes.shape[1] + 1)
    while len(chosen) < k:
        pick = propose(logs, best, chosen)
        if pick is None:
            pick = _most_different(nearest, chosen, good, single)
        chosen.append(pick)
        best = np.maximum(best, logs[:, pick])
        nearest = np.minimum(nearest, (codes != codes[pick]).sum(axis=1))
    return chosen


def _portable(
    norm: np.ndarray, k: int, seed: int, data: DeviceTimes, cols: np.ndarray
) -> list[int]:
    def propose(logs: np.ndarray, best: np.ndarray, chosen: list[int]) -> int | None:
        score = np.maximum(best[:, None], logs).mean(axis=0)
        score[chosen] = -np.inf
        pick = int(np.argmax(score))
        return None if chosen and score[pick] <= best.mean() + SATURATION else pick

    return _spread_greedy(norm, k, data, cols, propose)


def _maximin(norm: np.ndarray, k: int, seed: int, data: DeviceTimes, cols: np.ndarray) -> list[int]:
    """Greedy on (worst training device, then geometric mean) of the best within the set;
    saturated, the diversity fill of ``portable``."""

    def propose(logs: np.ndarray, best: np.ndarray, chosen: list[int]) -> int | None:
        within = np.maximum(best[:, None], logs)
        worst, mean = within.min(axis=0), within.mean(axis=0)
        worst[chosen] = -np.inf
        mean[chosen] = -np.inf
        if (
            chosen
            and worst.max() <= best.min() + SATURATION
            and mean.max() <= best.mean() + SATURATION
        ):
            return None
        return int(np.lexsort((-mean, -worst))[0])  # ties: the better mean, then lower index

    return _spread_greedy(norm, k, data, cols, propose)


def synthetic_devices(logs: np.ndarray, codes: np.ndarray, count: int, seed: int) -> np.ndarray:
    """``count`` devices (rows of log fractions of their optimum, floored) made from the
    training devices' ``logs``: each a random training device whose every parameter value's
    configurations are shifted by one normal draw (per parameter, the standard deviation
    between devices of each value's best log fraction, averaged over values; 0.1 with one
    device), then renormalised so its best is 0."""
    rng = np.random.default_rng(seed)
    widths = []
    for j in range(codes.shape[1]):
        values = np.unique(codes[:, j])
        if len(values) < 2:
            widths.append(0.0)
            continue
        peaks = np.array([[row[codes[:, j] == v].max() for v in values] for row in logs])
        peaks -= peaks.max(axis=1, keepdims=True)
        widths.append(float(peaks.std(axis=0).mean()) if len(logs) > 1 else 0.1)
    out = np.empty((count, logs.shape[1]))
    for i in range(count):
        row = logs[rng.integers(len(logs))].copy()
        for j, width in enumerate(widths):
            if width > 0:
                row += rng.normal(0.0, width, codes[:, j].max() + 1)[codes[:, j]]
        out[i] = row - row.max()
    return np.maximum(out, math.log(GEOMEAN_FLOOR))


def _perturbed(
    norm: np.ndarray, k: int, seed: int, data: DeviceTimes, cols: np.ndarray
) -> list[int]:
    logs = np.log(np.maximum(norm, GEOMEAN_FLOOR))
    synthetic = synthetic_devices(logs, _codes(data, cols), PERTURBED_DEVICES, seed)
    rows = np.vstack([logs, synthetic])
    # Half the weight on the real devices, half on the synthetic ones.
    weight = np.concatenate(
        [np.full(len(logs), 0.5 / len(logs)), np.full(len(synthetic), 0.5 / len(synthetic))]
    )
    chosen: list[int] = []
    best = np.full(len(rows), -np.inf)
    while len(chosen) < k:
        score = weight @ np.maximum(best[:, None], rows)
        score[chosen] = -np.inf
        pick = int(np.argmax(score))  # ties: the lowest column
        chosen.append(pick)
        best = np.maximum(best, rows[:, pick])
    return chosen


def _most_different(
    nearest: np.ndarray, chosen: list[int], good: np.ndarray, single: np.ndarray
) -> int:
    """Among ``good`` configurations not yet chosen (all remaining if none), the one whose
    fewest differing parameters to any chosen one (``nearest``) is largest; ties to the
    better geomean."""
    pool = good.copy()
    pool[chosen] = False
    if not pool.any():
        pool = np.ones(len(nearest), dtype=bool)
        pool[chosen] = False
    cand = np.flatnonzero(pool)
    return int(cand[np.lexsort((-single[cand], -nearest[cand]))[0]])


_METHODS = {
    Method.PORTABLE: _portable,
    Method.GREEDY_GEOMEAN: lambda norm, k, seed, data, cols: _greedy(norm, k, geometric=True),
    Method.GREEDY_MEAN: lambda norm, k, seed, data, cols: _greedy(norm, k, geometric=False),
    Method.CLUSTERED: lambda norm, k, seed, data, cols: list(choose(norm, k, Pruning.KMEANS, seed)),
    Method.MOST_OFTEN_BEST: lambda norm, k, seed, data, cols: list(choose(norm, k, Pruning.TOP_N)),
    Method.MAXIMIN: _maximin,
    Method.PERTURBED: _perturbed,
}
