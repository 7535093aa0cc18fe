"""The input of kernel-subset selection: one kernel on one device, every configuration timed at
many problems, as a dense (problems x configurations) matrix.

Loaded from a perfport store (``from_store``) or from a compact gzip CSV that can ship with
the repository (``perfport.select.table_file``)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Outcome, value_key
from perfport.devices import stored_device
from perfport.select.errors import SelectError
from perfport.store import Store, declared_params, export_rows


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: compare by identity
class PerfTable:
    """Median times (ms) of ``configs`` (columns) at ``problems`` (rows); NaN = no ok result.

    ``problems`` holds each problem's numeric values (booleans as 0/1) in ``problem_names``
    order; these are the features runtime selectors see. ``configs`` holds each
    configuration's values in ``param_names`` order. The arrays are copied and made read-only,
    so a table can be shared between evaluations without defensive copies.
    """

    problem_names: tuple[str, ...]
    problems: np.ndarray
    param_names: tuple[str, ...]
    configs: tuple[tuple[Any, ...], ...]
    times: np.ndarray
    device: str = ""
    kernel: str = ""
    # Problem values of one value everywhere (dtype, a size never varied): not features, but
    # the problem the table was measured at (a bundle's legal() reads them).
    fixed: Mapping[str, Any] = field(default_factory=dict)
    kernel_hash: str = ""  # the store's source hash of the kernel; "" where not known
    _config_index: dict[tuple[Any, ...], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        problems = np.array(self.problems, dtype=np.float64, ndmin=2)
        times = np.array(self.times, dtype=np.float64, ndmin=2)
        configs = tuple(tuple(c) for c in self.configs)
        n, f = problems.shape
        if f != len(self.problem_names):
            raise SelectError(
                f"problems has {f} columns for {len(self.problem_names)} problem names"
            )
        if times.shape != (n, len(configs)):
            raise SelectError(
                f"times is {times.shape[0]}x{times.shape[1]}, expected {n} problems x "
                f"{len(configs)} configurations"
            )
        if any(len(c) != len(self.param_names) for c in configs):
            raise SelectError(f"every configuration needs {len(self.param_names)} values")
        keys = [_key(c) for c in configs]
        if len(set(keys)) != len(configs):
            raise SelectError("configurations must be distinct")
        if not np.isfinite(problems).all():
            raise SelectError("problem values must be finite numbers")
        if (times[np.isfinite(times)] <= 0).any():
            raise SelectError("times must be positive milliseconds (NaN where none was measured)")
        times[~np.isfinite(times)] = np.nan  # inf means "no result" too; keep one marker
        problems.setflags(write=False)
        times.setflags(write=False)
        object.__setattr__(self, "problems", problems)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "configs", configs)
        object.__setattr__(self, "problem_names", tuple(self.problem_names))
        object.__setattr__(self, "param_names", tuple(self.param_names))
        object.__setattr__(self, "_config_index", {k: j for j, k in enumerate(keys)})

    @property
    def n_problems(self) -> int:
        return int(self.times.shape[0])

    @property
    def n_configs(self) -> int:
        return int(self.times.shape[1])

    def config_dict(self, j: int) -> dict[str, Any]:
        """Configuration ``j`` as parameter name -> value."""
        return dict(zip(self.param_names, self.configs[j], strict=True))

    def problem_dict(self, i: int) -> dict[str, float]:
        """Problem ``i`` as name -> value."""
        return dict(zip(self.problem_names, self.problems[i].tolist(), strict=True))

    def config_index(self, config: Sequence[Any] | dict[str, Any]) -> int:
        """The column of a configuration given as values or as a name -> value mapping."""
        key = (
            tuple(config[p] for p in self.param_names)
            if isinstance(config, dict)
            else tuple(config)
        )
        try:
            return self._config_index[_key(key)]
        except KeyError:
            raise SelectError(f"configuration {config} is not in the table") from None

    def subset(self, rows: Sequence[int] | np.ndarray) -> PerfTable:
        """The table restricted to some problems (indices or a boolean mask), in that order."""
        index = np.asarray(rows)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return replace(self, problems=self.problems[index], times=self.times[index])


# ---- the store -----------------------------------------------------------------------------


def from_store(
    db_path: str | Path,
    kernel: str | None = None,
    device: str | None = None,
    problem: Mapping[str, Any] | None = None,
) -> PerfTable:
    """Every ok median time of one kernel on one device in a perfport store.

    ``kernel`` is a kernel name or source-hash prefix, ``device`` a device name, fingerprint
    or id of this machine (``opencl:0:0``, as ``results`` takes); either may be left out where
    the store holds only one. ``problem`` keeps only the campaigns whose problem has these
    values (``{"dtype": "float"}``). Where several campaigns timed the same configuration at the same problem, the fastest median counts,
    unless any found it a wrong result: then NaN, as ``results`` ranks it. Problem values
    that are the same everywhere and not numbers (``dtype``) are dropped; the rest become
    the problem features.
    """
    path = Path(db_path)
    if not path.is_file():
        raise SelectError(f"no store at {path}; give the --db of a sweep or tuning run")
    with Store(path, create=False) as store:
        rows = list(export_rows(store, kernel=kernel, device=stored_device(device)))
        if not rows:
            raise SelectError(
                f"{path} has no results for kernel {kernel or '(any)'} on device "
                f"{device or '(any)'}; see 'perfport results --db {path}'"
            )
        _one_target({(r.device_fingerprint, r.device) for r in rows}, "device", kernel, device)
        _one_target({(r.kernel_hash, r.kernel) for r in rows}, "kernel", kernel, device)
        first, campaigns = rows[0], {r.campaign for r in rows}
        declared = declared_params(store, first.kernel_hash, first.kernel, campaigns)
    if problem:
        check_wanted(problem, [dict(r.problem) for r in rows])
        rows = [r for r in rows if matches(r.problem, problem)]

    problem_keys: dict[str, int] = {}
    config_keys: dict[str, int] = {}
    best: dict[tuple[int, int], float] = {}
    wrong: set[tuple[int, int]] = set()
    for r in rows:
        pi = problem_keys.setdefault(json.dumps(dict(r.problem), sort_keys=True), len(problem_keys))
        ci = config_keys.setdefault(json.dumps(dict(r.config), sort_keys=True), len(config_keys))
        if r.outcome is Outcome.WRONG_RESULT:  # outweighs an ok of any campaign (an
            wrong.add((pi, ci))  # unverified one's proves nothing), as 'results' ranks it
        elif r.ok and r.median_ms is not None and r.median_ms > 0:
            best[pi, ci] = min(r.median_ms, best.get((pi, ci), math.inf))

    problems = [json.loads(k) for k in problem_keys]
    configs = [json.loads(k) for k in config_keys]
    problem_names, features = _problem_features(problems)
    others = sorted({k for p in problems for k in p} - set(problem_names))
    fixed = {n: problems[0].get(n) for n in others}  # one value everywhere (else refused)
    param_names = _param_order(configs, declared)
    times = np.full((len(problems), len(configs)), np.nan)
    for (pi, ci), t in best.items():
        times[pi, ci] = np.nan if (pi, ci) in wrong else t
    # A canonical order (problems by their values, configurations by theirs) so that the same
    # measurements give the same table whatever order the store holds them in.
    config_values = [tuple(c[p] for p in param_names) for c in configs]
    p_order = np.lexsort(features.T[::-1]) if len(problem_names) else np.arange(len(problems))
    c_order = sorted(range(len(configs)), key=lambda j: _sort_key(config_values[j]))
    return PerfTable(
        problem_names=problem_names,
        problems=features[p_order],
        param_names=param_names,
        configs=tuple(config_values[j] for j in c_order),
        times=times[np.ix_(p_order, np.asarray(c_order, dtype=np.intp))],
        device=rows[0].device,
        kernel=rows[0].kernel,
        fixed=fixed,
        kernel_hash=rows[0].kernel_hash,
    )


def _one_target(
    identities: set[tuple[str, str]],
    what: str,
    kernel: str | None,
    device: str | None,
) -> None:
    """Refuse a store that mixes several devices (or kernels) the caller did not choose among;
    ``identities`` are the (fingerprint or hash, name) pairs found."""
    found = sorted(identities)
    if len(found) > 1:
        names = ", ".join(f"{name} ({ident[:12]})" for ident, name in found)
        option = "--device NAME|FINGERPRINT" if what == "device" else "--kernel NAME|HASH"
        raise SelectError(
            f"the store holds {len(found)} {what}s matching kernel={kernel or 'any'} "
            f"device={device or 'any'}: {names[:300]}; choose one with {option}"
        )


def _problem_features(problems: list[dict[str, Any]]) -> tuple[tuple[str, ...], np.ndarray]:
    """The problem values that are features: the numbers that vary (one value everywhere tells
    the selector nothing, and a tree fitted with it would split on values it never saw). Where
    none varies (one problem), every number is kept."""
    names = sorted({k for p in problems for k in p})
    kept, varying = [], []
    for name in names:
        values = [p.get(name) for p in problems]
        if all(isinstance(v, int | float) for v in values):  # bool is an int: 0/1
            kept.append(name)
            if len(set(values)) > 1:
                varying.append(name)
        elif len({json.dumps(v) for v in values}) > 1:
            raise SelectError(
                f"problem value {name!r} varies and is not a number ({sorted(set(map(str, values)))[:4]}); "
                f"keep one value's campaigns with --problem {name}="
                f"{next(v for v in values if v is not None)} (problem= in Python)"
            )
    kept = varying or kept
    features = np.array([[float(p[n]) for n in kept] for p in problems], dtype=np.float64)
    return tuple(kept), features.reshape(len(problems), len(kept))


def check_wanted(wanted: Mapping[str, Any], problems: Sequence[Mapping[str, Any]]) -> None:
    """A ``problem`` filter's name and value must occur (else the filter would leave nothing,
    or a typo of the name keep nothing either); a one-line SelectError names those there are."""
    for name, value in wanted.items():
        there = sorted({str(p[name]) for p in problems if name in p})
        if not there:
            names = sorted({k for p in problems for k in p})
            raise SelectError(f"--problem {name}={value}: no problem has a value {name!r}; "
                              f"give one of {', '.join(names)[:200] or '(none)'}")  # fmt: skip
        if not any(_same(p.get(name), value) for p in problems):
            raise SelectError(f"--problem {name}={value} matches no problem; give one of "
                              f"{name}'s values: {', '.join(there)[:200]}")  # fmt: skip


def matches(values: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(_same(values.get(name), value) for name, value in wanted.items())


def _same(a: Any, b: Any) -> bool:
    """Equal problem values: numbers by value (1024 and 1024.0), else equal and of one kind
    (true is not 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return a is not None and type(a) is type(b) and a == b


def _param_order(configs: list[dict[str, Any]], declared: dict[str, list[Any]]) -> tuple[str, ...]:
    """The kernel's declared parameter order where it names them all, else alphabetical."""
    names = {k for c in configs for k in c}
    missing = [k for k in names if any(k not in c for c in configs)]
    if missing:
        raise SelectError(f"configurations do not all set parameters {sorted(missing)}")
    ordered = [p for p in declared if p in names]
    return tuple(ordered) if len(ordered) == len(names) else tuple(sorted(names))


def _sort_key(values: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    # Numbers before strings, so mixed columns still sort without comparing str to int.
    return tuple((0, v) if isinstance(v, int | float) else (1, str(v)) for v in values)


# ---- compact CSV ---------------------------------------------------------------------------


def _key(config: Sequence[Any]) -> tuple[Any, ...]:
    # True == 1 in Python: a parameter that takes both has two configurations, not one.
    return tuple(value_key(v) for v in config)
