"""The gzip CSV form of a ``PerfTable``, compact enough to ship with the repository.

One row per (problem, configuration): ``problem.<name>``, ``config.<name>`` and ``time_ms``
(empty where it failed or was not measured) columns, after ``# device:``, ``# kernel:`` (and
``# kernel_hash:``, the store's source hash, where known) comment lines."""

from __future__ import annotations

import csv
import gc
import gzip
import io
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from perfport.select.errors import SelectError
from perfport.select.table import PerfTable, check_wanted, matches

_PROBLEM = "problem."
_CONFIG = "config."
_TIME = "time_ms"
_MAGIC = "# perfport select table 1"
_FLAGS = {"true": 1.0, "false": 0.0}  # as _cell writes a bool


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
    """Read a table written by ``save_csv``; a malformed file is a one-line SelectError that
    names the first line at fault. ``problem`` keeps only the rows whose problem has these
    values; a problem column that is then one value and not a number (``dtype``) is dropped,
    as ``from_store`` drops it."""
    where = str(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
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
    with _no_cycle_collection():
        return _parsed(where, lines[body_start:], body_start, meta, problem)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Parsing makes millions of small lists and tuples, none in a cycle; the cyclic collector
    would scan them again and again (half the time of loading a shipped table)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _parsed(
    where: str,
    lines: list[str],
    body_start: int,
    meta: dict[str, str],
    problem: Mapping[str, Any] | None,
) -> PerfTable:
    try:
        rows = list(csv.reader(lines))
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
    numbered, p_cols = _kept_rows(where, header, p_cols, rows[1:], body_start + 2, problem)
    if not numbered:
        raise SelectError(f"{where}: the table has a header but no rows")
    cells = _Cells(where, header, numbered)
    problems, pi = cells.distinct(p_cols, _problem_values)
    configs, ci = cells.distinct(c_cols, lambda row: tuple(map(_value, row)))
    t = cells.times(header.index(_TIME))
    cells.check_unique(pi * len(configs) + ci)
    cells.raise_first()
    times = np.full((len(problems), len(configs)), np.nan)
    times[pi, ci] = t
    return PerfTable(
        problem_names=tuple(header[k][len(_PROBLEM) :] for k in p_cols),
        problems=np.array(problems, dtype=np.float64).reshape(len(problems), len(p_cols)),
        param_names=tuple(header[k][len(_CONFIG) :] for k in c_cols),
        configs=tuple(configs),
        times=times,
        device=meta["device"], kernel=meta["kernel"], fixed=_fixed(header, p_cols, numbered),
        kernel_hash=meta["kernel_hash"],
    )  # fmt: skip


def _problem_values(row: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(map(_feature, row))


def _feature(text: str) -> float:
    """A problem value as the selector reads it: a finite number, true/false as 1/0 (a store's
    bool is an int too)."""
    value = _FLAGS.get(text.strip())
    value = float(text) if value is None else value
    if not math.isfinite(value):
        raise ValueError(f"{text} is not finite")
    return value


class _Cells:
    """A table's rows taken column by column (a table is problems x configurations, so its
    cells repeat: each distinct row of a column group is converted once). Each check notes its
    first fault; ``raise_first`` raises the one on the earliest line, as a reader going line
    by line would."""

    def __init__(self, where: str, header: list[str], numbered: list[tuple[int, list[str]]]):
        self.where, self.header = where, header
        self.lines = [n for n, _ in numbered]
        self.columns = list(zip(*(row for _, row in numbered), strict=True))
        self.faults: list[tuple[int, str]] = []  # (row, message)

    def distinct(
        self, cols: list[int], convert: Callable[[tuple[str, ...]], tuple[Any, ...]]
    ) -> tuple[list[tuple[Any, ...]], np.ndarray]:
        """The distinct values of these columns' rows, by value ("16" and "16.0" are one), in
        order of first appearance; and each row's index into them."""
        number, first = _distinct_rows([self.columns[k] for k in cols], len(self.lines))
        index: dict[tuple[Any, ...], int] = {}
        of_distinct = np.zeros(len(first), dtype=np.intp)
        for d, r in enumerate(first.tolist()):
            text = tuple(self.columns[k][r] for k in cols)
            try:
                of_distinct[d] = index.setdefault(convert(text), len(index))
            except ValueError:  # only problem values can fail (a configuration takes text)
                self.faults.append((r, self._not_a_feature(cols, r)))
                break  # rows are in order of first appearance: this is the earliest
        return list(index), of_distinct[number]

    def _not_a_feature(self, cols: list[int], r: int) -> str:
        k = next(k for k in cols if not _is_feature(self.columns[k][r]))
        name, cell = self.header[k][len(_PROBLEM) :], self.columns[k][r].strip()
        if _is_number(cell):
            return f"problem values must be finite numbers, not {name}={cell}"
        return (f"problem values must be numbers, not {name}={cell}; keep one value's rows "
                f"with --problem {name}={cell} (problem= in Python)")  # fmt: skip

    def times(self, col: int) -> np.ndarray:
        """time_ms: NaN where empty (nothing ran); else a number above 0."""
        cells = np.char.strip(np.asarray(self.columns[col], dtype=str))
        empty = cells == ""
        try:
            t = np.where(empty, "nan", cells).astype(np.float64)
        except ValueError:  # a cell that is no number: find it as Python reads numbers
            t = np.full(len(cells), np.nan)
            for r, cell in enumerate(cells.tolist()):
                try:
                    t[r] = float(cell) if cell else math.nan
                except ValueError:
                    self.faults.append((r, f"time_ms {cell!r} is not a number"))
                    return t
        bad = ~empty & ~(np.isfinite(t) & (t > 0))
        if bad.any():
            r = int(np.argmax(bad))
            self.faults.append((r, "time_ms must be positive, or empty where nothing ran; got "
                                   f"{cells[r]}"))  # fmt: skip
        return t

    def check_unique(self, cell: np.ndarray) -> None:
        """One time per problem and configuration."""
        _, first = np.unique(cell, return_index=True)
        if len(first) < len(cell):
            repeat = np.ones(len(cell), dtype=bool)
            repeat[first] = False
            self.faults.append((int(np.argmax(repeat)), "repeats a problem and configuration"))

    def raise_first(self) -> None:
        if self.faults:
            r, message = min(self.faults, key=lambda fault: fault[0])  # ties: check order
            joiner = " " if message.startswith("repeats") else ": "
            raise SelectError(f"{self.where}: line {self.lines[r]}{joiner}{message}")


def _distinct_rows(columns: list[tuple[str, ...]], n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's number among the distinct rows of ``columns`` (texts), numbered in order of
    first appearance; and each distinct row's first row."""
    number: dict[tuple[str, ...], int] = {}
    first: list[int] = []
    rows = zip(*columns, strict=True) if columns else [()] * n_rows
    codes = [number.setdefault(row, len(number)) for row in rows]
    for r, code in enumerate(codes):  # the first rows, found in one pass over few distinct
        if code == len(first):
            first.append(r)
    return np.array(codes, dtype=np.intp), np.array(first, dtype=np.intp)


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
        check_wanted(problem, given)
        numbered = [
            nr for nr, values in zip(numbered, given, strict=True) if matches(values, problem)
        ]
    texts = {k: {row[k] for _, row in numbered} for k in p_cols}
    numbers = [k for k in p_cols if not _one_name(texts[k])]
    # As from a store: a number that never varies is no feature, unless none varies.
    varying = [k for k in numbers if len({_value(c) for c in texts[k]}) > 1]
    return numbered, varying or numbers


def _fixed(
    header: list[str], p_cols: list[int], numbered: list[tuple[int, list[str]]]
) -> dict[str, Any]:
    """The problem columns dropped as one value everywhere: name -> value."""
    dropped = [k for k, h in enumerate(header) if h.startswith(_PROBLEM) and k not in p_cols]
    return {header[k][len(_PROBLEM) :]: _value(numbered[0][1][k]) for k in dropped if numbered}


def _is_number(text: str) -> bool:
    """A number, or true/false (1/0)."""
    try:
        float(text)
    except ValueError:
        return text.strip() in _FLAGS
    return True


def _is_feature(text: str) -> bool:
    try:
        _feature(text)
    except ValueError:
        return False
    return True


def _one_name(texts: set[str]) -> bool:
    """A problem column that is one value, and not a number, everywhere (``dtype``): not a
    feature, so dropped."""
    return len(texts) == 1 and not _is_number(next(iter(texts)))


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
