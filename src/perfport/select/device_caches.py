"""Kernel Tuner caches of one kernel on several GPUs, joined into one devices x
configurations time matrix (``DeviceTimes``) for choosing a configuration set for every GPU
(``perfport.select.across_devices``). The files are read by the store's one Kernel Tuner cache
reader (``perfport.store.formats.kt_cache``); here they are pooled.

Configurations are matched across caches by their parameter values. The columns are every
configuration seen in any cache; one that is absent (it violates that device's constraints) or
failed on a device is NaN there (performance 0).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import StoreError, value_key
from perfport._core.containers import as_list
from perfport.select.errors import SelectError
from perfport.store.formats.kt_cache import KernelTunerCache, read_kt_cache
from perfport.store.formats.untrusted import clip


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
            if str(holdout) == f or same_file(wanted, Path(f)):
                return i
        if str(holdout) in self.devices:
            return self.devices.index(str(holdout))
        raise SelectError(
            f"holdout {holdout} is neither one of the cache files nor a device name "
            f"({', '.join(self.devices)}); pass one of those"
        )


def load_caches(files: Sequence[str | Path]) -> DeviceTimes:
    """Kernel Tuner cache files (``.json`` or ``.json.gz``) of one kernel on several devices,
    as one devices x configurations time matrix. The files must tune the same parameters (in
    any order) on the same problem size; a parameter that only some files list is allowed where
    it takes one value in each of them (a constant such as a fixed filter size). Parameters
    with a single value everywhere are left out of the configurations, into ``fixed``."""
    files = as_list(files, "files", SelectError)  # one path as a str was read letter by letter
    if len(files) < 1:
        raise SelectError("portable selection needs at least one Kernel Tuner cache file")
    paths = [Path(f) for f in files]
    for i, a in enumerate(paths):
        for b in paths[:i]:
            if str(a) == str(b) or same_file(a, b):
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
    # Keyed by value_key: (True, 1) and (1, 1) are two configurations, though equal in Python.
    seen = {k: config for entries in per_file for k, (config, _) in entries.items()}
    configs = sorted(seen.values(), key=_order)
    col = {_typed(c): j for j, c in enumerate(configs)}
    times = np.full((len(files), len(configs)), np.nan)
    for d, entries in enumerate(per_file):
        for k, (_, t) in entries.items():
            times[d, col[k]] = t
    return DeviceTimes(
        tuple(devices), tuple(str(f) for f in files), params, tuple(configs), times,
        {k: v for k, (v, _) in fixed.items()},
    )  # fmt: skip


def _check_tuned_everywhere(
    paths: Sequence[Path],
    caches: Sequence[KernelTunerCache],
    values: Sequence[dict[str, list[Any]]],
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


def _check_value_kinds(paths: Sequence[Path], values: Sequence[dict[str, list[Any]]]) -> None:
    """The same kinds of value for a parameter in every cache: ``true`` in one cache and ``1``
    in another is one setting written two ways, which would not pool (configurations are
    told apart by value_key), and the shipped configuration would carry one spelling (``tune
    --configs`` refuses a boolean for an integer parameter). One cache may hold both kinds
    (Kernel Tuner's own test cache declares ``['test', 1, True, 2.45]``): the caches need only
    share a kind. A missing value (``null``) is no kind: it equals no number or string."""
    seen: dict[str, tuple[set[str], Path]] = {}
    for path, per_key in zip(paths, values, strict=True):
        for key, vs in per_key.items():
            kinds = {_kind(v) for v in vs if v is not None}
            other = seen.setdefault(key, (kinds, path))
            if kinds and other[0] and not kinds & other[0]:
                raise SelectError(
                    f"{path}: parameter {clip(key)} has {'/'.join(sorted(kinds))} values here "
                    f"and {'/'.join(sorted(other[0]))} values in {other[1]}; write each "
                    "parameter's values as one kind in every cache (e.g. 1 and 0 everywhere, "
                    "not true and false in one)"
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
    paths: Sequence[Path],
    caches: Sequence[KernelTunerCache],
    values: Sequence[dict[str, list[Any]]],
) -> None:
    """Caches of different problem sizes rank configurations for different work; every pair
    that records a ``problem_size`` is compared (containment is not transitive), and where
    perfport's export records the whole problem, that too (``_check_whole_problems``)."""
    _check_whole_problems(paths, caches, values)
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


def _check_whole_problems(
    paths: Sequence[Path],
    caches: Sequence[KernelTunerCache],
    values: Sequence[dict[str, list[Any]]],
) -> None:
    """perfport's export records the whole problem (``perfport.problem``), while its
    ``problem_size`` holds only the values the global size is made of, which problems differing
    elsewhere share (a 7x7 and a 15x15 convolution on one image). Two such caches must record
    the same problem where both record a value (one may lack a value added since); a problem
    value that another cache fixes as a parameter of the same name (Kernel Tuner's
    convolution keeps the filter as parameters) must be that value."""
    for j, i in combinations(range(len(caches)), 2):  # i after j, as the size check names them
        a, b = _whole_problem(caches[i]), _whole_problem(caches[j])
        if a is None and b is None:
            continue
        first = a if a is not None else _fixed_apart(values[i], caches[j])
        second = b if b is not None else _fixed_apart(values[j], caches[i])
        # Only what both record: an export made before a problem value existed lacks it.
        keys = set(first) & set(second)
        differ = sorted(k for k in keys if value_key(first.get(k)) != value_key(second.get(k)))
        if differ:
            raise SelectError(
                f"{paths[i]} was tuned on {_settings(first, differ, a is None)}, {paths[j]} on "
                f"{_settings(second, differ, b is None)}; pool caches of the same problem only"
            )


def _whole_problem(cache: KernelTunerCache) -> dict[str, Any] | None:
    """The problem perfport's export records, or None (Kernel Tuner's own caches)."""
    return cache.problem if isinstance(cache.problem, dict) else None


def _settings(values: dict[str, Any], keys: list[str], fixed: bool) -> str:
    """ "filter_width=7, height=256" for ``keys``."""
    shown = [f"{clip(k)[1:-1]}={clip(values[k])}" for k in keys[:4]]
    shown += ["..."] if len(keys) > 4 else []
    return ", ".join(shown) + (" (fixed parameters)" if fixed else "")


def _same_problem(
    a: KernelTunerCache,
    a_values: dict[str, list[Any]],
    b: KernelTunerCache,
    b_values: dict[str, list[Any]],
) -> bool:
    """Whether two caches' problem sizes agree. One size may list more values than the other:
    perfport's export lists the filter size ([15, 15, 4096, 4096]) that Kernel Tuner keeps as
    parameters fixed at one value ([4096, 4096] with filter_width = filter_height = 15). The
    extra values must then be those of the other cache's fixed parameters (that the longer one
    does not tune), or a 7x7 filter would pass for a 15x15 one."""
    sa, sb = a.problem_size, b.problem_size
    if not isinstance(sa, list) or not isinstance(sb, list):
        return bool(sa == sb)
    return _covers(sa, sb, _constants(b_values, b, a)) or _covers(
        sb, sa, _constants(a_values, a, b)
    )


def _covers(big: list[Any], small: list[Any], constants: list[str]) -> bool:
    """Whether ``big`` is ``small`` plus values found among ``constants`` (as multisets)."""
    have, want = Counter(map(str, big)), Counter(map(str, small))
    return not (want - have) and not (have - want - Counter(constants))


def _constants(
    values: dict[str, list[Any]], cache: KernelTunerCache, other: KernelTunerCache
) -> list[str]:
    """The values (as text) of a cache's single-valued parameters that ``other`` does not tune,
    and of the whole problem where perfport's export records it: an earlier export listed the
    filter in its size ([15, 15, 4096, 4096]), today's in its problem alone (the problem's
    values less those its size lists: those are no extra)."""
    problem = Counter(map(str, (_whole_problem(cache) or {}).values()))
    size = cache.problem_size if isinstance(cache.problem_size, list) else [cache.problem_size]
    extra = problem - Counter(map(str, size))
    return [*(str(v) for v in _fixed_apart(values, other).values()), *extra.elements()]


def _constants_note(
    cache: KernelTunerCache, values: dict[str, list[Any]], other: KernelTunerCache
) -> str:
    """Where a cache's fixed parameters stand for problem values that the other cache lists in
    its size, " (with filter_width=15 fixed)": the reader sees what was compared."""
    fixed = [f"{clip(k)[1:-1]}={clip(v)}" for k, v in _fixed_apart(values, other).items()]
    fixed = fixed if len(fixed) <= 4 else [*fixed[:4], "..."]
    return f" (with {', '.join(fixed)} fixed)" if fixed else ""


def _fixed_apart(values: dict[str, list[Any]], other: KernelTunerCache) -> dict[str, Any]:
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
) -> dict[tuple[Any, ...], tuple[tuple[Any, ...], float]]:
    """Configuration (values in ``params`` order) and time, for the entries that ran, keyed
    by ``_typed`` configuration."""
    where = [cache.params.index(p) for p in params]
    out: dict[tuple[Any, ...], tuple[tuple[Any, ...], float]] = {}
    for entry in cache.entries:
        # Failures are strings ("CompilationFailedConfig", ...); they stay NaN (performance 0).
        # A time of 0 is no measurement: kept as a failure, it dropped the true best.
        if entry.bad_times is not None or (entry.time_ms is not None and not entry.time_ms > 0):
            why = entry.bad_times or f"time {entry.time_ms} ms is not above 0"
            raise SelectError(f"{path}: entry {entry.key}: {why}; fix or drop that entry")
        if entry.time_ms is not None:
            config = tuple(entry.values[i] for i in where)
            out[_typed(config)] = (config, entry.time_ms)
    if not out:
        raise SelectError(f"{path}: no configuration has a valid time; re-run the tuning")
    return out


def _typed(config: tuple[Any, ...]) -> tuple[Any, ...]:
    """A configuration as a key that tells True from 1 (value_key)."""
    return tuple(value_key(v) for v in config)


def _order(config: tuple[Any, ...]) -> tuple[tuple[int, Any, str], ...]:
    # Numbers before strings, numerically; a stable column order whatever the files' order.
    # Numbers are compared as they are: float() of a 400-digit int would overflow. A boolean
    # follows the number it equals (1, then True), so the order is one whatever comes first.
    return tuple(
        (0, v, "bool" if isinstance(v, bool) else "") if isinstance(v, int | float)
        else (1, 0, str(v))
        for v in config
    )  # fmt: skip


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


def same_file(a: Path, b: Path) -> bool:
    """One file under two paths: a symlink, another spelling, or a hard link."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # a path that does not exist is read (and refused) later
        return False
