"""Kernel Tuner cache files and T4 result files, in and out of the store.

A Kernel Tuner cache (``.json`` or ``.json.gz``) maps comma-joined parameter values to a record
with ``time`` (mean ms, or a failure string), ``times`` and timings of the tool; T4 (ICPE'24)
lists results with ``configuration``, ``times.runtimes`` and ``invalidity``. Both become one
campaign of an external device and kernel, so every query, export and replay works on them.
Files from other tools are untrusted: the whole file is parsed and checked before anything
is written, and the write is one transaction, so a bad file changes nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import (
    Backend,
    Config,
    DeviceInfo,
    DeviceType,
    Measurement,
    Outcome,
    Problem,
    StoreError,
)
from perfport.space import PruningReport
from perfport.store.queries import declared_params, one_group
from perfport.store.store import CampaignStatus, Store

_MAX_BYTES = 1 << 30  # decompressed; a larger "cache" is refused rather than read
# Kernel Tuner's failure strings <-> perfport's outcomes.
_KT_FAILURES = {
    "CompilationFailedConfig": Outcome.COMPILE_ERROR,
    "RuntimeFailedConfig": Outcome.LAUNCH_REFUSED,
    "InvalidConfig": Outcome.PRUNED,
}
_T4_INVALIDITY = {
    "correct": Outcome.OK,
    "compile": Outcome.COMPILE_ERROR,
    "runtime": Outcome.LAUNCH_REFUSED,
    "constraints": Outcome.PRUNED,
    "correctness": Outcome.WRONG_RESULT,
    "timeout": Outcome.TIMEOUT,
}


@dataclass(frozen=True)
class Imported:
    """A parsed file, ready to store: one device, kernel and problem."""

    format: str
    device: str
    kernel: str
    problem: Problem
    params: dict[str, list[Any]]  # the tuning parameters and their values
    measurements: tuple[Measurement, ...]

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
        }


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


# ---- reading -----------------------------------------------------------------------------
def read_json(path: str | Path) -> Any:
    """JSON from a plain or gzipped file, with a cap on the decompressed size."""
    p = Path(path)
    try:
        with p.open("rb") as raw:
            magic = raw.read(2)
        opener = gzip.open if magic == b"\x1f\x8b" else open
        with opener(p, "rb") as f:
            data = f.read(_MAX_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise StoreError(
            f"{p}: cannot read it ({exc}); give a Kernel Tuner cache or T4 file"
        ) from None
    if len(data) > _MAX_BYTES:
        raise StoreError(f"{p}: more than {_MAX_BYTES >> 20} MiB of JSON; refusing to import it")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:120]
        raise StoreError(f"{p}: not valid JSON ({reason}); the file may be truncated") from None


def parse(path: str | Path, device: str | None = None, kernel: str | None = None) -> Imported:
    """Parse a Kernel Tuner cache or a T4 file. ``device``/``kernel`` name what the file does
    not (T4 files name neither; some caches have an empty device name)."""
    data = read_json(path)
    stem = Path(path).name.split(".")[0]
    if isinstance(data, dict) and "cache" in data:
        return _parse_cache(data, str(path), device, kernel, stem)
    if isinstance(data, dict) and "results" in data and "schema_version" in data:
        return _parse_t4(data, str(path), device, kernel, stem)
    raise StoreError(
        f"{path}: neither a Kernel Tuner cache (no 'cache') nor a T4 file (no 'results')"
    )


def _bad(path: str, what: str) -> StoreError:
    return StoreError(f"{path}: {what}; the file is malformed and nothing was imported")


def _plain(value: Any, path: str, what: str) -> Any:
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return value
    raise _bad(path, f"{what} {str(value)[:40]!r} is not a plain value")


def _times(values: Any, path: str, what: str) -> tuple[float, ...]:
    if not isinstance(values, list):
        raise _bad(path, f"{what} must be a list of times")
    out = []
    for v in values:
        if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
            raise _bad(path, f"{what} holds {str(v)[:40]!r}, not a time in ms")
        out.append(float(v))
    return tuple(out)


def _parse_cache(
    data: dict[str, Any], path: str, device: str | None, kernel: str | None, stem: str
) -> Imported:
    keys = data.get("tune_params_keys")
    params = data.get("tune_params")
    cache = data.get("cache")
    if not (isinstance(keys, list) and isinstance(params, dict) and isinstance(cache, dict)):
        raise _bad(path, "a Kernel Tuner cache needs tune_params_keys, tune_params and cache")
    if not keys or set(keys) != set(params) or not all(isinstance(k, str) for k in keys):
        raise _bad(path, "tune_params_keys and tune_params name different parameters")
    values = {k: [_plain(v, path, f"a value of {k}") for v in params[k]] for k in keys}
    measurements = []
    for key, entry in cache.items():
        if not isinstance(entry, dict):
            raise _bad(path, f"cache entry {str(key)[:40]!r} is not a record")
        config = Config.of(
            {k: _plain(entry.get(k), path, f"entry {key} parameter {k}") for k in keys}
        )
        if ",".join(str(config[k]) for k in keys) != key:
            raise _bad(path, f"cache key {key[:60]!r} does not match its parameter values")
        compile_ms = entry.get("compile_time")
        compile_ms = (
            float(compile_ms)
            if isinstance(compile_ms, int | float) and math.isfinite(compile_ms)
            else None
        )
        t = entry.get("time")
        if isinstance(t, str):
            if t not in _KT_FAILURES:
                raise _bad(path, f"entry {key}: unknown failure {t[:40]!r}")
            message = f"Kernel Tuner: {t}"
            measurements.append(
                Measurement(config, _KT_FAILURES[t], message, compile_ms=compile_ms)
            )
            continue
        times = _times(entry.get("times", [t]), path, f"entry {key} times")
        if not times:
            raise _bad(path, f"entry {key} has no times")
        measurements.append(Measurement(config, Outcome.OK, "", times, compile_ms))
    problem = data.get("problem_size")
    size = (
        "x".join(str(_plain(v, path, "problem_size")) for v in problem)
        if isinstance(problem, list)
        else problem
    )
    return Imported(
        format="kt-cache",
        device=device or str(data.get("device_name") or "") or stem,
        kernel=kernel or str(data.get("kernel_name") or "") or stem,
        problem=Problem.of({"problem_size": size}) if size is not None else Problem(),
        params=values,
        measurements=tuple(measurements),
    )


def _parse_t4(
    data: dict[str, Any], path: str, device: str | None, kernel: str | None, stem: str
) -> Imported:
    results = data.get("results")
    if not isinstance(results, list):
        raise _bad(path, "T4 results must be a list")
    unit = str((data.get("metadata") or {}).get("timeunit", "milliseconds")).lower()
    scale = {"miliseconds": 1.0, "milliseconds": 1.0, "ms": 1.0, "seconds": 1000.0, "s": 1000.0,
             "microseconds": 1e-3, "us": 1e-3}.get(unit)  # fmt: skip
    if scale is None:
        raise _bad(path, f"unknown time unit {unit!r}")
    measurements = []
    values: dict[str, list[Any]] = {}
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("configuration"), dict):
            raise _bad(path, f"result {i} has no configuration")
        config = Config.of(
            {str(k): _plain(v, path, f"result {i} {k}") for k, v in r["configuration"].items()}
        )
        for k, v in config.items():
            if v not in values.setdefault(k, []):
                values[k].append(v)
        outcome = _T4_INVALIDITY.get(str(r.get("invalidity", "correct")))
        if outcome is None:
            raise _bad(path, f"result {i}: unknown invalidity {str(r.get('invalidity'))[:40]!r}")
        timings = r.get("times") if isinstance(r.get("times"), dict) else {}
        compile_ms = timings.get("compilation")
        compile_ms = (
            compile_ms * scale
            if isinstance(compile_ms, int | float) and math.isfinite(compile_ms)
            else None
        )
        if outcome is Outcome.OK:
            runtimes = tuple(
                t * scale for t in _times(timings.get("runtimes", []), path, f"result {i} runtimes")
            )
            if not runtimes:
                raise _bad(path, f"result {i} is correct but has no runtimes")
            measurements.append(Measurement(config, outcome, "", runtimes, compile_ms))
        else:
            measurements.append(
                Measurement(config, outcome, f"T4: {r.get('invalidity')}", compile_ms=compile_ms)
            )
    if len({m.config for m in measurements}) != len(measurements):
        raise _bad(path, "a configuration appears twice")
    return Imported("t4", device or stem, kernel or stem, Problem(), values, tuple(measurements))


# ---- storing -----------------------------------------------------------------------------
def import_file(
    store: Store, path: str | Path, device: str | None = None, kernel: str | None = None
) -> Imported:
    """Parse ``path`` and store it as one campaign. Importing the same file again adds nothing."""
    imported = parse(path, device, kernel)
    content = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    cartesian = math.prod(len(v) for v in imported.params.values())
    report = PruningReport(cartesian, len(imported.measurements), ())  # what the file tells
    ids = (
        store.device_id(external_device(imported.device)),
        store.external_kernel_id(imported.kernel, imported.format, imported.params),
        store.problem_id(imported.problem),
    )
    settings = {"imported_from": str(path), "format": imported.format}
    campaign = store.open_campaign(
        f"import-{imported.format}-{content}", ids, "imported", 0, settings, report
    )
    store.record_many(campaign, imported.measurements)
    store.set_status(campaign, CampaignStatus.COMPLETE)
    return imported


# ---- writing -----------------------------------------------------------------------------
def to_kt_cache(
    store: Store, kernel: str | None = None, device: str | None = None
) -> dict[str, Any]:
    """One device/kernel/problem's results as a Kernel Tuner cache (``time`` is the mean)."""
    rows = one_group(store, kernel=kernel, device=device)
    keys = list(rows[0]["config"])
    failure = {o: s for s, o in _KT_FAILURES.items()}
    cache = {}
    for r in rows:
        entry: dict[str, Any] = dict(r["config"])
        if r["outcome"] == "ok":
            entry["time"] = float(np.mean(r["times_ms"]))
            entry["times"] = r["times_ms"]
        else:
            entry["time"] = failure.get(Outcome(r["outcome"]), "RuntimeFailedConfig")
        entry.update(
            compile_time=r["compile_ms"] or 0.0, verification_time=0, benchmark_time=0, strategy_time=0,
            framework_time=0, timestamp=_stamp(r["created"]),
        )  # fmt: skip
        cache[",".join(str(r["config"][k]) for k in keys)] = entry
    problem = rows[0]["problem"]
    size = problem.get("problem_size")
    return {
        "device_name": rows[0]["device"],
        "kernel_name": rows[0]["kernel"],
        "problem_size": [int(x) for x in str(size).split("x")] if size else list(problem.values()),
        "tune_params_keys": keys,
        "tune_params": _declared_values(store, rows[0]["kernel_hash"], keys, rows),
        "objective": "time",
        "cache": cache,
    }


def to_t4(store: Store, kernel: str | None = None, device: str | None = None) -> dict[str, Any]:
    """One device/kernel/problem's results in the T4 format."""
    invalidity = {o: s for s, o in _T4_INVALIDITY.items()}
    results = []
    for r in one_group(store, kernel=kernel, device=device):
        ok = r["outcome"] == "ok"
        results.append(
            {
                "timestamp": _stamp(r["created"]),
                "configuration": r["config"],
                "times": {
                    "compilation": r["compile_ms"] or 0.0,
                    "framework": 0,
                    "search_algorithm": 0,
                    "validation": 0,
                    "runtimes": r["times_ms"],
                },
                "invalidity": invalidity.get(Outcome(r["outcome"]), "runtime"),
                "correctness": 1 if ok else 0,
                "measurements": [
                    {
                        "name": "time",
                        "value": float(np.mean(r["times_ms"])) if ok else None,
                        "unit": "ms",
                    }
                ],
                "objectives": ["time"],
            }
        )
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}


def _declared_values(
    store: Store, kernel_hash: str, keys: list[str], rows: list[dict[str, Any]]
) -> dict[str, list[Any]]:
    """Each parameter's values as the kernel declares them (or as seen, failing that)."""
    declared = declared_params(store, kernel_hash)
    return {k: declared.get(k) or sorted({r["config"][k] for r in rows}, key=_order) for k in keys}


def _stamp(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat(sep=" ")


def _order(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))
