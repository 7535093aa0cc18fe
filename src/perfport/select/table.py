"""The input of kernel-subset selection: one kernel on one device, every configuration timed at
many problems, as a dense (problems x configurations) matrix.

Loaded from a perfport store (``from_store``) or from a compact gzip CSV (``save_csv`` /
``load_csv``) that can ship with the repository. The CSV has one row per (problem,
configuration): ``problem.<name>``, ``config.<name>`` and ``time_ms`` (empty where it failed
or was not measured) columns, after ``# device:``, ``# kernel:`` (and ``# kernel_hash:``, the
store's source hash, where known) comment lines."""

from __future__ import annotations

import csv
import gc
import gzip
import io
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

_PROBLEM = "problem."
_CONFIG = "config."
_TIME = "time_ms"
_MAGIC = "# perfport select table 1"


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
        _check_wanted(problem, [dict(r.problem) for r in rows])
        rows = [r for r in rows if _matches(r.problem, problem)]

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


def _check_wanted(wanted: Mapping[str, Any], problems: Sequence[Mapping[str, Any]]) -> None:
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


def _matches(values: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
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


def save_csv(table: PerfTable, path: str | Path) -> None:
    """Write ``table`` as gzip CSV: a ``problem.`` column for each feature, then for each fixed
    value. Byte-identical for equal tables: no gzip timestamp or file name, rows in table
    order, times to 5 significant digits (steps of 0.01%, far finer than run-to-run noise)."""
    text = io.StringIO()
    text.write(f"{_MAGIC}\n# device: {_one_line(table.device)}\n")
    text.write(f"# kernel: {_one_line(table.kernel)}\n")
    text.write(f"# kernel_hash: {_one_line(table.kernel_hash)}\n" if table.kernel_hash else "")
    writer = csv.writer(text, lineterminator="\n")
    # The fixed values too, one value in every row: load_csv finds them fixed again (dtype).
    fixed = sorted(n for n in table.fixed if n not in table.problem_names)
    names = [*table.problem_names, *fixed]
    writer.writerow(
        [_PROBLEM + n for n in names] + [_CONFIG + n for n in table.param_names] + [_TIME]
    )
    config_cells = [[_cell(v) for v in c] for c in table.configs]
    fixed_cells = [_cell(table.fixed[n]) for n in fixed]
    for i in range(table.n_problems):
        problem_cells = [_cell(v) for v in table.problems[i].tolist()] + fixed_cells
        for j, cells in enumerate(config_cells):
            t = table.times[i, j]
            writer.writerow([*problem_cells, *cells, "" if np.isnan(t) else f"{t:.5g}"])
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
        gz.write(text.getvalue().encode())


def _checked_header(header: list[str], where: str) -> list[str]:
    if header and header[0].lstrip().startswith(("{", "[")):
        raise SelectError(f"{where} is JSON, not a table (a Kernel Tuner cache is read by "
                          "'perfport select portable'); give a .csv.gz from 'perfport select "
                          "export' or a perfport store (.db)")  # fmt: skip
    configs = [h for h in header if h.startswith(_CONFIG)]
    if _TIME not in header or not configs or len(set(header)) != len(header):
        raise SelectError(
            f"{where}: the header must name time_ms, at least one config.<name> column and "
            f"each column once; got {','.join(header)[:200]}"
        )
    return header


def load_csv(path: str | Path, problem: Mapping[str, Any] | None = None) -> PerfTable:
    """Read a table written by ``save_csv``; a malformed file is a one-line SelectError.
    ``problem`` keeps only the rows whose problem has these values; a problem column that is
    then one value and not a number (``dtype``) is dropped, as ``from_store`` drops it."""
    collecting, _ = gc.isenabled(), gc.disable()  # a list per row, no cycle: gc took a third
    try:
        return _read_csv(str(path), problem)
    finally:
        if collecting:
            gc.enable()


def _read_csv(where: str, problem: Mapping[str, Any] | None) -> PerfTable:
    try:
        with gzip.open(where, "rt", encoding="utf-8", newline="") as f:
            text = f.read()
    except FileNotFoundError:
        raise SelectError(f"no table file {where}") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise SelectError(f"{where} is not a gzip CSV table ({exc})") from None
    lines = text.splitlines()
    body_start = next((n for n, line in enumerate(lines) if not line.startswith("#")), len(lines))
    meta = {"device": "", "kernel": "", "kernel_hash": ""}
    for line in lines[:body_start]:
        name, _, value = line[1:].partition(":")
        if name.strip() in meta:
            meta[name.strip()] = value.strip()
    try:
        rows = list(csv.reader(lines[body_start:]))
    except csv.Error as exc:  # e.g. a field over the csv module's size limit
        raise SelectError(f"{where} is not a CSV table ({exc})") from None
    if not rows:
        raise SelectError(f"{where}: no header line; expected problem.*, config.* and time_ms")
    header = _checked_header(rows[0], where)
    p_cols = [k for k, h in enumerate(header) if h.startswith(_PROBLEM)]
    c_cols = [k for k, h in enumerate(header) if h.startswith(_CONFIG)]
    if len(p_cols) + len(c_cols) + 1 != len(header):
        other = [h for h in header if not h.startswith((_PROBLEM, _CONFIG)) and h != _TIME]
        raise SelectError(f"{where}: unknown columns {other}; use problem.<name>, config.<name>")
    t_col = header.index(_TIME)
    numbered, p_cols = _kept_rows(where, header, p_cols, rows[1:], body_start + 2, problem)
    problem_index: dict[tuple[float, ...], int] = {}
    config_index: dict[tuple[Any, ...], int] = {}
    cells: dict[tuple[int, int], float] = {}
    value_of = {text: _value(text) for text in {row[k] for _, row in numbered for k in c_cols}}
    for n, row in numbered:
        try:
            problem_values = tuple(float(row[k]) for k in p_cols)
        except ValueError:
            k = next(k for k in p_cols if not _is_number(row[k]))
            name, cell = header[k][len(_PROBLEM) :], row[k].strip()
            raise SelectError(
                f"{where}: line {n}: problem values must be numbers, not {name}={cell}; keep "
                f"one value's rows with --problem {name}={cell} (problem= in Python)"
            ) from None
        config = tuple(value_of[row[k]] for k in c_cols)  # each distinct text parsed once
        cell = row[t_col].strip()
        try:
            t = float(cell) if cell else math.nan
        except ValueError:
            raise SelectError(f"{where}: line {n}: time_ms {cell!r} is not a number") from None
        if cell and not (math.isfinite(t) and t > 0):  # empty, not "nan", marks no result
            raise SelectError(
                f"{where}: line {n}: time_ms must be positive, or empty where nothing ran; "
                f"got {cell}"
            )
        key = (
            problem_index.setdefault(problem_values, len(problem_index)),
            config_index.setdefault(config, len(config_index)),
        )
        if key in cells:
            raise SelectError(f"{where}: line {n} repeats a problem and configuration")
        cells[key] = t
    if not cells:
        raise SelectError(f"{where}: the table has a header but no rows")
    times = np.full((len(problem_index), len(config_index)), np.nan)
    for (i, j), t in cells.items():
        times[i, j] = t
    return PerfTable(
        problem_names=tuple(header[k][len(_PROBLEM) :] for k in p_cols),
        problems=np.array(list(problem_index), dtype=np.float64).reshape(
            len(problem_index), len(p_cols)
        ),
        param_names=tuple(header[k][len(_CONFIG) :] for k in c_cols),
        configs=tuple(config_index),
        times=times,
        device=meta["device"], kernel=meta["kernel"], fixed=_fixed(header, p_cols, numbered),
        kernel_hash=meta["kernel_hash"],
    )  # fmt: skip


def _kept_rows(
    where: str,
    header: list[str],
    p_cols: list[int],
    rows: list[list[str]],
    first_line: int,
    problem: Mapping[str, Any] | None,
) -> tuple[list[tuple[int, list[str]]], list[int]]:
    """The rows (with their line numbers) whose problem has the ``problem`` values, and the
    problem columns that are features: those that vary (or, where none does, the numbers)."""
    numbered = list(enumerate(rows, first_line))
    for n, row in numbered:
        if len(row) != len(header):
            raise SelectError(f"{where}: line {n} has {len(row)} fields for {len(header)} columns")
    if problem:
        given = [
            {header[k][len(_PROBLEM) :]: _value(row[k]) for k in p_cols} for _, row in numbered
        ]
        _check_wanted(problem, given)
        numbered = [
            nr for nr, values in zip(numbered, given, strict=True) if _matches(values, problem)
        ]
    cells = {k: [row[k] for _, row in numbered] for k in p_cols}
    numbers = [k for k in p_cols if not _one_name(cells[k])]
    # As from a store: a number that never varies is no feature, unless none varies.
    varying = [k for k in numbers if len({_value(c) for c in set(cells[k])}) > 1]
    return numbered, varying or numbers


def _fixed(
    header: list[str], p_cols: list[int], numbered: list[tuple[int, list[str]]]
) -> dict[str, Any]:
    """The problem columns dropped as one value everywhere: name -> value."""
    dropped = [k for k, h in enumerate(header) if h.startswith(_PROBLEM) and k not in p_cols]
    return {header[k][len(_PROBLEM) :]: _value(numbered[0][1][k]) for k in dropped if numbered}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _one_name(cells: Sequence[str]) -> bool:
    """A problem column that is one value, and not a number, everywhere (``dtype``): not a
    feature, so dropped."""
    return bool(cells) and len(set(cells)) == 1 and not _is_number(cells[0])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 512.0 -> "512": shorter, and reads back as the same float
    return str(value)


def _value(text: str) -> Any:
    """A configuration value: int, float, bool or string, as written by ``_cell``."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _key(config: Sequence[Any]) -> tuple[Any, ...]:
    # True == 1 in Python: a parameter that takes both has two configurations, not one.
    return tuple(value_key(v) for v in config)
