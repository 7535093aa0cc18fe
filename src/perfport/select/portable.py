"""Configurations to ship for every GPU, including GPUs not in the data (issue 5, part 5).

Lawson's pipeline chooses k configurations that serve every problem size of one device. Here
the varying input is the device: from Kernel Tuner caches of one kernel on several GPUs,
choose k configurations so that a new GPU, measuring only those k and keeping the best, gets
close to its own optimum. ``leave_one_out`` scores that promise honestly: the set is chosen
without a device and scored on it.

Configurations are matched across caches by their parameter values. The columns are every
configuration seen in any cache; one that is absent (it violates that device's constraints) or
failed on a device has performance 0 there. Only configurations that ran on every *training*
device are shipped: a configuration known to fail on some GPU is a liability to ship (on the
convolution caches, 167 of 4362 fail somewhere, none of them a device's optimum). The held-out
device's failures are not used for the choice (that would leak the answer); a shipped
configuration that fails there scores 0, floored at ``GEOMEAN_FLOOR`` in a geometric mean.

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
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import StoreError
from perfport._core.stats import floored_geomean
from perfport.select.errors import SelectError
from perfport.select.normalise import CUTOFF, relative
from perfport.select.prune import GEOMEAN_FLOOR, Pruning, choose
from perfport.store.formats.kt_cache import KernelTunerCache, read_kt_cache
from perfport.store.formats.untrusted import clip

# A rise of the training geometric mean smaller than this (in log space) counts as "stopped
# rising": it is below what repeated timings of one configuration can resolve.
SATURATION = 1e-9
PERTURBED_DEVICES = 256  # synthetic devices of the ``perturbed`` method
DEFAULT_LOO_KS = tuple(range(1, 9))


class Method(Enum):
    PORTABLE = "portable"
    GREEDY_GEOMEAN = "greedy_geomean"
    CLUSTERED = "clustered"
    MOST_OFTEN_BEST = "most_often_best"
    GREEDY_MEAN = "greedy_mean"
    MAXIMIN = "maximin"
    PERTURBED = "perturbed"


@dataclass(frozen=True)
class DeviceTimes:
    """Times of one kernel's configurations on several devices: ``times[d, c]`` in the caches'
    unit (ms), NaN where configuration ``c`` is absent or failed on device ``d``."""

    devices: tuple[str, ...]
    files: tuple[str, ...]  # one per device, as given
    param_names: tuple[str, ...]
    configs: tuple[tuple[Any, ...], ...]
    times: np.ndarray
    fixed: dict[str, Any] = field(default_factory=dict)  # parameters with one value everywhere

    def config_dict(self, index: int) -> dict[str, Any]:
        return dict(zip(self.param_names, self.configs[index], strict=True))

    def device_index(self, holdout: str | Path) -> int:
        """The device of a file (as given, or the same resolved path) or a device name."""
        wanted = Path(holdout)
        for i, f in enumerate(self.files):
            if str(holdout) == f or _same_file(wanted, Path(f)):
                return i
        if str(holdout) in self.devices:
            return self.devices.index(str(holdout))
        raise SelectError(
            f"holdout {holdout} is neither one of the cache files nor a device name "
            f"({', '.join(self.devices)}); pass one of those"
        )


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
        """``{"k", "configs", "per_device", "geomean", "fixed"}``: the output of ``perfport
        select portable --json``; ``fixed`` holds the parameters every cache fixes at one
        value, left out of ``configs`` (they are not a choice)."""
        return {
            "k": self.k,
            "configs": [dict(c) for c in self.configs],
            "per_device": dict(self.per_device),
            "geomean": self.geomean,
            "fixed": dict(self.fixed),
        }


@dataclass(frozen=True)
class LooRow:
    """One method, k and held-out device: the held-out device's fraction of its optimum."""

    method: str
    k: int
    holdout: str
    fraction: float


# ---- loading --------------------------------------------------------------------------------


def load_caches(files: Sequence[str | Path]) -> DeviceTimes:
    """Kernel Tuner cache files (``.json`` or ``.json.gz``) of one kernel on several devices,
    as one devices x configurations time matrix. The files must tune the same parameters (in
    any order) on the same problem size; a parameter that only some files list is allowed where
    it takes one value in each of them (a constant such as a fixed filter size). Parameters
    with a single value everywhere are left out of the configurations, into ``fixed``."""
    if len(files) < 1:
        raise SelectError("portable selection needs at least one Kernel Tuner cache file")
    paths = [Path(f) for f in files]
    for i, a in enumerate(paths):
        for b in paths[:i]:
            if str(a) == str(b) or _same_file(a, b):
                raise SelectError(f"{a} is given twice (as {b}); give each cache once")
    caches = [_read_cache(p) for p in paths]
    values = [{key: cache.values_of(key) for key in cache.params} for cache in caches]
    _check_same_problem(paths, caches, values)
    _check_value_kinds(paths, values)
    first = tuple(caches[0].params)
    shared = set(first).intersection(*(c.params for c in caches))
    varying = {key for per_key in values for key, v in per_key.items() if len(v) > 1}
    _check_tuned_everywhere(paths, caches, values, shared)
    fixed: dict[str, tuple[Any, Path]] = {}  # parameter -> its single value, and where seen
    for path, per_key in zip(paths, values, strict=True):
        for key, v in per_key.items():
            if key in varying:
                continue
            (value,) = v
            if key in fixed and fixed[key][0] != value:
                raise SelectError(
                    f"{path}: parameter {clip(key)} is fixed at {clip(value)} here but at "
                    f"{clip(fixed[key][0])} in {fixed[key][1]}; "
                    "pool caches of the same problem only"
                )
            fixed.setdefault(key, (value, path))
    varies = {k for k in shared if k not in fixed}
    params = tuple(k for k in first if k in varies)
    per_file = [_entries(p, c, params) for p, c in zip(paths, caches, strict=True)]
    devices = _device_names(paths, caches)
    configs = sorted(set().union(*per_file), key=_order)
    col = {c: j for j, c in enumerate(configs)}
    times = np.full((len(files), len(configs)), np.nan)
    for d, entries in enumerate(per_file):
        for c, t in entries.items():
            times[d, col[c]] = t
    return DeviceTimes(
        tuple(devices), tuple(str(f) for f in files), params, tuple(configs), times,
        {k: v for k, (v, _) in fixed.items()},
    )  # fmt: skip


def _check_tuned_everywhere(
    paths: Sequence[Path],
    caches: Sequence[KernelTunerCache],
    values: Sequence[dict[str, set[Any]]],
    shared: set[str],
) -> None:
    """A parameter that varies in one cache must be tuned by every cache: else the caches are of
    different kernels or search spaces. The message names a file that lacks it, which is the
    odd one out as often as the file where it varies."""
    for path, cache, per_key in zip(paths, caches, values, strict=True):
        # In the file's own order, so the message is the same on every run.
        key = next((k for k in cache.params
                    if len(per_key[k]) > 1 and k not in shared), None)  # fmt: skip
        if key is not None:
            lacking = next(q for q, c in zip(paths, caches, strict=True)
                           if key not in c.params)  # fmt: skip
            raise SelectError(
                f"{path}: parameter {clip(key)} varies here but {lacking} does not tune it; "
                "only caches of the same kernel and search space can be pooled"
            )


def _check_value_kinds(paths: Sequence[Path], values: Sequence[dict[str, set[Any]]]) -> None:
    """One kind of value per parameter in every cache: Python counts ``true`` and ``1`` as one
    value, so they would pool silently, and the shipped configuration would carry whichever
    came first (``tune --configs`` refuses a boolean for an integer parameter). A missing
    value (``null``) is no kind: it equals no number or string, so it cannot pool wrongly."""
    seen: dict[str, tuple[str, Path]] = {}
    for path, per_key in zip(paths, values, strict=True):
        for key, vs in per_key.items():
            for kind in sorted({_kind(v) for v in vs if v is not None}):
                other = seen.setdefault(key, (kind, path))
                if other[0] != kind:
                    where = "" if other[1] == path else f" in {other[1]}"
                    raise SelectError(
                        f"{path}: parameter {clip(key)} has {kind} values here and {other[0]} "
                        f"values{where}; write each parameter's values as one kind in every "
                        "cache (e.g. 1 and 0 everywhere, not true and false in one)"
                    )


def _kind(value: Any) -> str:
    # int and float are one kind: 16 and 16.0 are the same work-group size. A list is its
    # elements' kinds, since [true] and [1] compare equal as well.
    if isinstance(value, tuple):
        kinds = sorted({_kind(v) for v in value if v is not None})
        return "list of " + "/".join(kinds) if kinds else "list"
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else "string"


def _device_names(paths: Sequence[Path], caches: Sequence[KernelTunerCache]) -> list[str]:
    """One distinct name per cache: its ``device_name``, else its file name without suffixes.
    Two caches of one GPU model (another driver, another machine) stay two devices, named by
    their file, or by their path where the file names are the same too."""
    names = []
    for path, cache in zip(paths, caches, strict=True):
        name = cache.device_name
        names.append(name if name.strip() else _stem(path))
    file_names = [p.name for p in paths]
    labelled = [
        n if names.count(n) == 1
        else f"{n} ({p.name})" if file_names.count(p.name) == 1
        else f"{n} ({p})"
        for n, p in zip(names, paths, strict=True)
    ]  # fmt: skip
    return _distinct(labelled)


def _distinct(names: Sequence[str]) -> list[str]:
    """``names`` with a number added to any that still repeats (a device_name may itself read
    like "GPU (a.json)"): per_device is keyed by these, and a repeat would merge two devices."""
    out: list[str] = []
    for i, name in enumerate(names):
        candidate, n = name, i + 1
        while candidate in out or (candidate == name and names.count(name) > 1):
            candidate, n = f"{name} #{n}", n + len(names)
        out.append(candidate)
    return out


def _check_same_problem(
    paths: Sequence[Path], caches: Sequence[KernelTunerCache], values: Sequence[dict[str, set[Any]]]
) -> None:
    """Caches of different problem sizes rank configurations for different work; every pair
    that records a ``problem_size`` is compared (containment is not transitive)."""
    sized = [i for i, c in enumerate(caches) if c.has_problem_size]
    for n, i in enumerate(sized):
        for j in sized[:n]:
            if not _same_problem(caches[i], values[i], caches[j], values[j]):
                raise SelectError(
                    f"{paths[i]} was tuned on problem size {clip(caches[i].problem_size)}"
                    f"{_constants_note(caches[i], values[i], caches[j])}, {paths[j]} on "
                    f"{clip(caches[j].problem_size)}"
                    f"{_constants_note(caches[j], values[j], caches[i])}"
                    "; pool caches of the same problem only"
                )


def _same_problem(
    a: KernelTunerCache,
    a_values: dict[str, set[Any]],
    b: KernelTunerCache,
    b_values: dict[str, set[Any]],
) -> bool:
    """Whether two caches' problem sizes agree. One size may list more values than the other:
    perfport's export lists the filter size ([15, 15, 4096, 4096]) that Kernel Tuner keeps as
    parameters fixed at one value ([4096, 4096] with filter_width = filter_height = 15). The
    extra values must then be those of the other cache's fixed parameters (that the longer one
    does not tune), or a 7x7 filter would pass for a 15x15 one."""
    sa, sb = a.problem_size, b.problem_size
    if not isinstance(sa, list) or not isinstance(sb, list):
        return bool(sa == sb)
    return _covers(sa, sb, _constants(b_values, a)) or _covers(sb, sa, _constants(a_values, b))


def _covers(big: list[Any], small: list[Any], constants: list[str]) -> bool:
    """Whether ``big`` is ``small`` plus values found among ``constants`` (as multisets)."""
    have, want = Counter(map(str, big)), Counter(map(str, small))
    return not (want - have) and not (have - want - Counter(constants))


def _constants(values: dict[str, set[Any]], other: KernelTunerCache) -> list[str]:
    """The values (as text) of a cache's single-valued parameters that ``other`` does not tune."""
    return [str(v) for v in _fixed_apart(values, other).values()]


def _constants_note(
    cache: KernelTunerCache, values: dict[str, set[Any]], other: KernelTunerCache
) -> str:
    """Where a cache's fixed parameters stand for problem values that the other cache lists in
    its size, " (with filter_width=15 fixed)": the reader sees what was compared."""
    fixed = [f"{clip(k)[1:-1]}={clip(v)}" for k, v in _fixed_apart(values, other).items()]
    fixed = fixed if len(fixed) <= 4 else [*fixed[:4], "..."]
    return f" (with {', '.join(fixed)} fixed)" if fixed else ""


def _fixed_apart(values: dict[str, set[Any]], other: KernelTunerCache) -> dict[str, Any]:
    """A cache's parameters with a single value that ``other`` does not tune, and that value."""
    tuned = set(other.params)
    return {k: next(iter(v)) for k, v in values.items() if len(v) == 1 and k not in tuned}


def _read_cache(path: Path) -> KernelTunerCache:
    try:
        cache = read_kt_cache(path)
    except StoreError as exc:  # the store's reader words it; select's callers catch SelectError
        raise SelectError(str(exc)) from None
    if not cache.entries:
        raise SelectError(f"{path}: the cache holds no configurations; re-run the tuning")
    return cache


def _entries(
    path: Path, cache: KernelTunerCache, params: tuple[str, ...]
) -> dict[tuple[Any, ...], float]:
    """Configuration (values in ``params`` order) -> time, for the entries that ran."""
    where = [cache.params.index(p) for p in params]
    out: dict[tuple[Any, ...], float] = {}
    for entry in cache.entries:
        # Failures are strings ("CompilationFailedConfig", ...); they stay NaN (performance 0),
        # and so does a time that is not positive.
        if entry.time_ms is not None and entry.time_ms > 0:
            out[tuple(entry.values[i] for i in where)] = entry.time_ms
    if not out:
        raise SelectError(f"{path}: no configuration has a valid time; re-run the tuning")
    return out


def _order(config: tuple[Any, ...]) -> tuple[tuple[int, Any, str], ...]:
    # Numbers before strings, numerically; a stable column order whatever the files' order.
    # Numbers are compared as they are: float() of a 400-digit int would overflow.
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, str(v)) for v in config)


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


def _same_file(a: Path, b: Path) -> bool:
    """One file under two paths: a symlink, another spelling, or a hard link."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # a path that does not exist is read (and refused) later
        return False


# ---- choosing -------------------------------------------------------------------------------


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
        paths = list(files)
        # A holdout file not among ``files`` joins them; otherwise it names one of them (by
        # path or device name).
        if (
            holdout is not None
            and Path(holdout).is_file()
            and not any(str(holdout) == str(p) or _same_file(Path(holdout), Path(p)) for p in paths)
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
    chosen = _choose_for(data, k, held, Method(method), seed)
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


def _choose_for(
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
    while len(chosen) < k:
        pick = propose(logs, best, chosen)
        if pick is None:
            pick = _most_different(codes, chosen, good, single)
        chosen.append(pick)
        best = np.maximum(best, logs[:, pick])
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
    codes: np.ndarray, chosen: list[int], good: np.ndarray, single: np.ndarray
) -> int:
    """Among ``good`` configurations not yet chosen (all remaining if none), the one whose
    fewest differing parameters to any chosen one is largest; ties to the better geomean."""
    pool = good.copy()
    pool[chosen] = False
    if not pool.any():
        pool = np.ones(len(codes), dtype=bool)
        pool[chosen] = False
    cand = np.flatnonzero(pool)
    distance = (codes[cand][:, None, :] != codes[chosen][None, :, :]).sum(axis=2).min(axis=1)
    return int(cand[np.lexsort((-single[cand], -distance))[0]])


_METHODS = {
    Method.PORTABLE: _portable,
    Method.GREEDY_GEOMEAN: lambda norm, k, seed, data, cols: _greedy(norm, k, geometric=True),
    Method.GREEDY_MEAN: lambda norm, k, seed, data, cols: _greedy(norm, k, geometric=False),
    Method.CLUSTERED: lambda norm, k, seed, data, cols: list(choose(norm, k, Pruning.KMEANS, seed)),
    Method.MOST_OFTEN_BEST: lambda norm, k, seed, data, cols: list(choose(norm, k, Pruning.TOP_N)),
    Method.MAXIMIN: _maximin,
    Method.PERTURBED: _perturbed,
}


# ---- evaluation -----------------------------------------------------------------------------


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
    ks = sorted(set(ks))
    perf = relative(data.times)
    rows = []
    for method in map(Method, methods):
        for held, device in enumerate(data.devices):
            for k in ks:
                chosen = _choose_for(data, k, held, method, seed)
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
