"""Kernel Tuner cache files (``.json`` or ``.json.gz``): the one reader, its conversion into a
campaign to store, and the writer.

A cache maps comma-joined parameter values to a record with ``time`` (mean ms, or a failure
string), ``times`` and timings of the tool. ``read_kt_cache`` checks the structure every reader
needs (distinct parameter names, every entry a record holding every parameter as a flat value)
and nothing more, so that ``perfport import`` and ``perfport select portable`` accept the same
files; each then checks what it needs of the times (``to_imported``; select's pooling).
Files from other tools are untrusted: the whole file is parsed and checked before anything is
written, and every error is one line that names the file, the problem and the fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Config, Measurement, Outcome, Problem, StoreError, distinct_values
from perfport.store.described import declared_params, kernel_spec
from perfport.store.formats.imported import Imported, finite_ms, malformed, plain, run_times
from perfport.store.formats.json_text import strict_json
from perfport.store.formats.untrusted import clip, kind_of, read_json
from perfport.store.queries import ResultRow, one_group
from perfport.store.store import Store

# Kernel Tuner's failure strings <-> perfport's outcomes.
KT_FAILURES = {
    "CompilationFailedConfig": Outcome.COMPILE_ERROR,
    "RuntimeFailedConfig": Outcome.LAUNCH_REFUSED,
    "InvalidConfig": Outcome.PRUNED,
}
# Where Kernel Tuner writes a failure's name, newest first (see ``_failure``).
_FAILURE_KEYS = ("__error__", "error", "time")
_NOT_A_CACHE = (
    "not a Kernel Tuner cache (needs 'tune_params_keys', a list of distinct parameter names, "
    "'cache', and a flat 'problem_size' if any); pass a cache written by Kernel Tuner or "
    "`perfport export --format kt-cache`"
)


@dataclass(frozen=True)
class CacheEntry:
    """One configuration of a cache. ``values`` follow the cache's ``params``; Kernel Tuner's
    list values (its tuples) are tuples here, so that a configuration is hashable."""

    key: str
    values: tuple[Any, ...]
    time_ms: float | None  # "time" when it is a finite number
    failure: str | None  # "time" when it is a string: Kernel Tuner's name for a failure
    times_ms: tuple[float, ...]  # every timed run: "times", else the one "time"
    bad_times: str | None  # why times_ms is empty on an entry that did not fail
    compile_ms: float | None


@dataclass(frozen=True)
class KernelTunerCache:
    """A Kernel Tuner cache file, structurally checked."""

    path: str
    device_name: str  # "" where the file names none
    kernel_name: str
    params: tuple[str, ...]  # tune_params_keys, in the file's order
    declared: dict[str, Any] | None  # tune_params, where the file has a mapping there
    has_problem_size: bool
    problem_size: Any  # as written: a number, a string, a flat list of them, or null
    # The whole problem, where perfport's own export names it: problem_size holds only the
    # values the global size is made of, which other problems share (a matmul's K).
    problem: Any
    entries: tuple[CacheEntry, ...]
    objective: str = "time"  # what the tuning ranked by, as the file names it ("GFLOP/s")
    entry: str = ""  # the file's own kernel_name (the kernel function); "" where it has none

    def values_of(self, name: str) -> list[Any]:
        """The distinct values parameter ``name`` takes in the entries, first seen first. Told
        apart by value_key: a parameter may take both 1 and True, which a set merged."""
        i = self.params.index(name)
        return distinct_values(e.values[i] for e in self.entries)


def is_kt_cache_json(data: Any) -> bool:
    return isinstance(data, dict) and "cache" in data


def read_kt_cache(path: str | Path) -> KernelTunerCache:
    """Read and check a Kernel Tuner cache file (one left open by an interrupted run too)."""
    return kt_cache_from_json(read_json(path, "a Kernel Tuner cache", close_open_cache), str(path))


def close_open_cache(text: bytes) -> bytes | None:
    """The cache Kernel Tuner left open-ended, closed as Kernel Tuner closes it when it reads
    one back: it writes the header up to ``"cache": {`` and then each entry followed by a
    comma, and only a finished run writes the closing braces. None if ``text`` is not that."""
    body = text.strip()
    if b'"cache"' not in body or body.endswith((b"}\n}", b"}}}")):
        return None
    return (body[:-1] if body.endswith(b",") else body) + b"}\n}"


def kt_cache_from_json(data: Any, path: str) -> KernelTunerCache:
    """Check a parsed cache (see the module's docstring for what is checked)."""
    keys = data.get("tune_params_keys") if isinstance(data, dict) else None
    if (
        not isinstance(keys, list)
        or not keys
        or not all(isinstance(k, str) for k in keys)
        or len(set(keys)) != len(keys)
        or not isinstance(data.get("cache"), dict)
        # Deep nesting would blow the stack where an error message prints the size.
        or not _flat(data.get("problem_size"))
    ):
        raise StoreError(f"{path}: {_NOT_A_CACHE}")
    objective = data.get("objective")
    if (
        isinstance(objective, str)
        and objective != "time"
        and not any(
            isinstance(raw, dict) and ("time" in raw or "times" in raw)
            for raw in data["cache"].values()
        )
    ):  # e.g. Kernel Tuner tuning its own strategies' settings for a 'score'
        raise StoreError(
            f"{path}: the cache's objective is {clip(objective)} and no entry has a 'time': "
            "perfport imports kernel times; give a cache whose entries keep Kernel Tuner's "
            "'time' (ms)"
        )
    params = tuple(keys)
    declared = data.get("tune_params")
    # perfport's own export names the kernel's spec apart from its entry function: the store's
    # other results (a prior's relatives) know it by that name.
    ours = data.get("perfport")
    spec_name = ours.get("spec_name") if isinstance(ours, dict) else None
    problem = ours.get("problem") if isinstance(ours, dict) else None
    return KernelTunerCache(
        path=path,
        device_name=str(data.get("device_name") or ""),
        kernel_name=str(spec_name or data.get("kernel_name") or ""),
        params=params,
        declared=declared if isinstance(declared, dict) else None,
        has_problem_size="problem_size" in data,
        problem_size=data.get("problem_size"),
        problem=problem,
        entries=tuple(_entry(path, key, raw, params) for key, raw in data["cache"].items()),
        objective=objective if isinstance(objective, str) else "time",
        entry=str(data.get("kernel_name") or ""),
    )


def _entry(path: str, key: str, raw: Any, params: tuple[str, ...]) -> CacheEntry:
    if not isinstance(raw, dict):
        raise StoreError(
            f"{path}: cache entry {clip(key)} is a {type(raw).__name__}, not an object; "
            "not a Kernel Tuner cache"
        )
    missing = next((p for p in params if p not in raw), None)
    if missing is not None:
        raise StoreError(
            f"{path}: cache entry {clip(key)} lacks parameter {clip(missing)}; "
            "the file is truncated or not a Kernel Tuner cache"
        )
    bad = next((p for p in params if not _flat(raw[p])), None)
    if bad is not None:
        raise StoreError(
            f"{path}: cache entry {clip(key)} has {clip(bad)} = {kind_of(raw[bad])}, "
            "not a finite number or a string; not a Kernel Tuner cache"
        )
    t = raw.get("time")
    failure = _failure(raw, params)
    times: tuple[float, ...] = ()
    why: str | None = None
    if failure is None and "time" not in raw and "times" not in raw:
        why = "are missing: the entry has neither 'time' nor a failure"
    elif failure is None:
        times, why = run_times(raw.get("times", [t]))
    compile_ms = raw.get("compile_time")
    return CacheEntry(
        key=key,
        values=tuple(tuple(v) if isinstance(v, list) else v for v in (raw[p] for p in params)),
        time_ms=finite_ms(t),
        failure=failure,
        times_ms=times,
        bad_times=why,
        compile_ms=float(compile_ms)
        if isinstance(compile_ms, int | float) and math.isfinite(compile_ms)
        else None,
    )


def _failure(raw: dict[str, Any], params: tuple[str, ...]) -> str | None:
    """Kernel Tuner's name for the failure of an entry, or None if it ran. Since Kernel Tuner
    1.4 it is in ``__error__`` (``error`` in the development versions before) and the entry
    has no ``time``; before, in the objective's key: ``time``, or e.g. ``GFLOP/s``. Kernel
    Tuner reads a failure name under any key back as a failure, so perfport does too."""
    for key in _FAILURE_KEYS:
        if isinstance(raw.get(key), str):  # an unknown name is refused by ``to_imported``
            return str(raw[key])
    return next(
        (v for k, v in raw.items() if k not in params and isinstance(v, str) and v in KT_FAILURES),
        None,
    )


def _flat(value: Any) -> bool:
    """A parameter value or problem size: a number, a string, or a flat list of them (Kernel
    Tuner's tuples). NaN and infinities are refused: NaN never equals itself, so it matches no
    configuration of another cache, and neither can be written back as JSON."""
    if isinstance(value, list):
        return all(_atom(v) for v in value)
    return value is None or _atom(value)


def _atom(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int | str)


# ---- into the store ----------------------------------------------------------------------
def to_imported(cache: KernelTunerCache, device: str | None, kernel: str | None) -> Imported:
    """The campaign a cache becomes. The store needs more than the reader checks: plain
    parameter values, keys that match them, known failures and valid times."""
    path, keys = cache.path, cache.params
    if cache.declared is None:  # no tune_params: the values the entries take, as they come
        values = {k: distinct_values(e.values[i] for e in cache.entries)
                  for i, k in enumerate(keys)}  # fmt: skip
    elif set(keys) != set(cache.declared):
        raise malformed(path, "tune_params_keys and tune_params name different parameters")
    else:
        values = {k: list(_declared(cache.declared[k], path, k)) for k in keys}
    for k, vs in values.items():
        for v in vs:
            plain(v, path, f"a value of {k}")
    stem = Path(path).name.split(".")[0]
    return Imported(
        format="kt-cache",
        device=device or cache.device_name or stem,
        kernel=kernel or cache.kernel_name or stem,
        problem=_problem(cache),
        params=values,
        measurements=tuple(_measurement(path, keys, e) for e in cache.entries),
        earlier_problem=None if cache.problem is None else _size_problem(cache),
        # The problem keys [1024] and "1024" alike, so the size as written goes apart; the
        # kernel is filed under its spec's name or --kernel-name, so the function's goes too.
        settings={
            **({"problem_size": cache.problem_size} if cache.has_problem_size else {}),
            **({"kernel_name": cache.entry} if cache.entry else {}),
        },
        objective=cache.objective,
    )


def _problem(cache: KernelTunerCache) -> Problem:
    """The problem a cache is stored under: the whole problem where perfport's own export
    names it (two exports that differ only outside problem_size stay two problems), else
    Kernel Tuner's problem_size as one value."""
    if cache.problem is not None:
        if not isinstance(cache.problem, dict):
            raise malformed(cache.path, "perfport.problem is not an object")
        return Problem.of(
            {k: plain(v, cache.path, f"perfport.problem {k}") for k, v in cache.problem.items()}
        )
    return _size_problem(cache)


def _size_problem(cache: KernelTunerCache) -> Problem:
    """problem_size as one problem value, a list joined by "x" ([4096, 4096]: "4096x4096"),
    as every release has keyed it: its campaign and a re-import's de-duplication depend on it.
    The export writes back the size as written, which the campaign's settings keep."""
    size = cache.problem_size
    size = "x".join(str(v) for v in size) if isinstance(size, list) else size
    return Problem.of({"problem_size": size}) if size is not None else Problem()


def _declared(values: Any, path: str, name: str) -> list[Any]:
    if not isinstance(values, list):
        raise malformed(path, f"tune_params of {name} is not a list of values")
    return values


def _measurement(path: str, keys: tuple[str, ...], entry: CacheEntry) -> Measurement:
    key = entry.key
    config = Config.of(
        {k: plain(v, path, f"entry {key} parameter {k}")
         for k, v in zip(keys, entry.values, strict=True)}
    )  # fmt: skip
    values = [config[k] for k in keys]
    if ",".join(map(str, values)) != key and not _narrow_float_key(key, values):
        raise malformed(path, f"cache key {key[:60]!r} does not match its parameter values")
    if entry.failure is not None:
        if entry.failure not in KT_FAILURES:
            raise malformed(path, f"entry {key}: unknown failure {entry.failure[:40]!r}")
        outcome = KT_FAILURES[entry.failure]
        return Measurement(
            config, outcome, f"Kernel Tuner: {entry.failure}", compile_ms=entry.compile_ms
        )
    if entry.bad_times is not None:
        raise malformed(path, f"entry {key} times {entry.bad_times}")
    if not entry.times_ms:
        raise malformed(path, f"entry {key} has no times")
    return Measurement(config, Outcome.OK, "", entry.times_ms, entry.compile_ms)


def _narrow_float_key(key: str, values: list[Any]) -> bool:
    """Whether ``key`` joins ``values`` as Kernel Tuner does where a value was a numpy float32
    (or float16): the key holds str(np.float32(v)), "0.1", while the entry holds float(v),
    0.10000000149011612. Only for a value that such a float holds exactly."""
    parts = []
    for v in values:
        texts = {str(v)}
        if isinstance(v, float):
            for narrow in (np.float16, np.float32):
                if abs(v) <= float(np.finfo(narrow).max) and float(narrow(v)) == v:
                    texts.add(str(narrow(v)))
        parts.append("(?:" + "|".join(map(re.escape, sorted(texts))) + ")")
    return re.fullmatch(",".join(parts), key) is not None


# ---- writing -----------------------------------------------------------------------------
# What "time" holds in an exported cache: the statistic perfport ranks configurations by, so
# that Kernel Tuner, which takes the lowest "time", names the same best; "times" keeps every
# sample.
EXPORTED_TIME = "median"


def to_kt_cache(
    store: Store,
    kernel: str | None = None,
    device: str | None = None,
    problem: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One device/kernel/problem's results as the cache Kernel Tuner would have written for
    the same tuning: ``kernel_name`` is the entry function (an imported cache's own),
    ``problem_size`` the kernel's sizes, ``tune_params_keys`` in the spec's order and
    ``time`` the median (EXPORTED_TIME)."""
    rows = one_group(store, kernel=kernel, device=device, problem=problem)
    # What the campaigns of these results ran with (an edited spec's values, not the first's)
    campaigns = {r.campaign for r in rows}
    spec = kernel_spec(store, rows[0].kernel_hash, rows[0].kernel, campaigns)
    written, size = _as_imported(store, rows, "problem_size")
    _, function = _as_imported(store, rows, "kernel_name")
    declared = declared_params(store, rows[0].kernel_hash, rows[0].kernel, campaigns)
    keys = [k for k in declared if k in rows[0].config] or list(rows[0].config)
    failure = {o: s for s, o in KT_FAILURES.items()}
    cache = {}
    for r in rows:
        entry: dict[str, Any] = {k: r.config[k] for k in keys}
        if r.ok:
            entry["time"] = float(r.median_ms if r.median_ms is not None else np.median(r.times_ms))
            entry["times"] = list(r.times_ms)
        else:
            entry["time"] = failure.get(r.outcome, "RuntimeFailedConfig")
        entry.update(
            compile_time=r.compile_ms or 0.0, verification_time=0, benchmark_time=0, strategy_time=0,
            framework_time=0, timestamp=stamp(r.created),
        )  # fmt: skip
        cache[",".join(str(r.config[k]) for k in keys)] = entry
    return {
        "device_name": rows[0].device,
        "kernel_name": str(function or spec.get("entry") or rows[0].kernel),
        "problem_size": size if written else problem_size(spec, rows[0].problem),
        "tune_params_keys": keys,
        "tune_params": {k: declared.get(k) or _seen(rows, k) for k in keys},
        "objective": "time",
        # Kernel Tuner reads only the keys above; this says what perfport put in them.
        "perfport": {"time": f"{EXPORTED_TIME} of times (ms)", "spec_name": rows[0].kernel,
                     "problem": dict(rows[0].problem)},
        "cache": cache,
    }  # fmt: skip


def kt_cache_text(document: Mapping[str, Any]) -> str:
    """A cache document as Kernel Tuner closes its own files: ``}\n}`` at the end. A run that
    adds to a cache cuts a closed file's last three characters and appends; cut from ``}}}``,
    that left the last entry open and the file unreadable to both tools."""
    text = strict_json(document, "a Kernel Tuner cache")
    if document.get("cache") and list(document)[-1] == "cache":
        text = text[:-1] + "\n}"
    return text


def _as_imported(store: Store, rows: list[ResultRow], name: str) -> tuple[bool, Any]:
    """(True, the value) of ``name`` (problem_size, kernel_name) as the newest import of
    ``rows`` that kept it wrote it (see ``to_imported``); (False, None) where none did:
    perfport's own results, and imports made before the settings kept it."""
    keys = tuple(sorted({r.campaign for r in rows if r.campaign.startswith("import-")}))
    if not keys:
        return False, None
    found = store.query(
        f"SELECT settings FROM campaigns WHERE key IN ({','.join('?' * len(keys))}) "
        "ORDER BY created DESC, id DESC",
        keys,
    )
    for (text,) in found:
        settings = json.loads(text)
        if isinstance(settings, dict) and name in settings:
            return True, settings[name]
    return False, None


def problem_size(spec: Mapping[str, Any], problem: Problem) -> Any:
    """Kernel Tuner's ``problem_size``: the problem values the kernel's global size is made
    of, dimension by dimension (one number for one dimension, as Kernel Tuner writes an int
    problem size). An imported size that the campaign does not keep as written (see
    ``_as_imported``) is read back from its problem value (``_stored_size``); a kernel
    whose global size names no problem value gives its numeric problem values in declared
    order."""
    size = problem.get("problem_size")
    if size is not None:
        return _stored_size(size)
    names: list[str] = []
    for text in spec.get("global_size") or []:  # a square matmul's (n, n) keeps both
        used = re.findall(r"[A-Za-z_]\w*", str(text))
        names += [n for n in dict.fromkeys(used) if n in problem]
    if not names:  # the spec's own order, where it has one
        names = [n for n in spec.get("problem") or problem if n in problem]
    values = [problem[n] for n in names if _numeric(problem[n])]
    return values[0] if len(values) == 1 else values


# A number as str() writes an int or a finite float, which _size_problem joined with "x".
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def _stored_size(size: Any) -> Any:
    """An imported problem_size from its problem value: a number as it is; text of numbers
    joined by "x" (how a list is stored) as that list; other text as it is ("matrix" was
    split into ["matri", ""]). A list of one number and its text are stored alike, as are a
    list of words and "x"-joined text: the list is taken."""
    if not isinstance(size, str):
        return size
    parts = size.split("x")
    if all(_NUMBER.fullmatch(p) for p in parts):
        return [json.loads(p) for p in parts]
    return size


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _seen(rows: list[ResultRow], key: str) -> list[Any]:
    """A parameter's values as the results take them (where the kernel declares none)."""
    return sorted(distinct_values(r.config[key] for r in rows), key=_order)


def stamp(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat(sep=" ")


def _order(value: Any) -> tuple[int, Any, bool]:
    # False and 0 (True and 1) compare equal: the number first, so the order is always one.
    if isinstance(value, int | float):
        return (0, value, isinstance(value, bool))
    return (1, str(value), False)
