"""T4 result files (ICPE'24): ``results`` with ``configuration``, ``times.runtimes`` and
``invalidity``; the reader (into a campaign to store) and the writer."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from perfport._core import Config, Measurement, Outcome, Problem, distinct_values
from perfport.store.formats.imported import Imported, finite_ms, malformed, plain, run_times
from perfport.store.formats.json_text import strict_json
from perfport.store.formats.kt_cache import stamp
from perfport.store.formats.untrusted import clip
from perfport.store.queries import ResultRow, one_group
from perfport.store.store import Store

T4_INVALIDITY = {
    "correct": Outcome.OK,
    "compile": Outcome.COMPILE_ERROR,
    "runtime": Outcome.LAUNCH_REFUSED,
    "constraints": Outcome.PRUNED,
    "correctness": Outcome.WRONG_RESULT,
    "timeout": Outcome.TIMEOUT,
}
_UNITS = {"miliseconds": 1.0, "milliseconds": 1.0, "ms": 1.0, "seconds": 1000.0, "s": 1000.0,
          "microseconds": 1e-3, "us": 1e-3}  # fmt: skip


def is_t4_json(data: Any) -> bool:
    return isinstance(data, dict) and "results" in data and "schema_version" in data


def t4_from_json(data: dict[str, Any], path: str, device: str, kernel: str) -> Imported:
    """A parsed T4 file as a campaign; T4 names neither the device nor the kernel."""
    results = data.get("results")
    if not isinstance(results, list):
        raise malformed(path, "T4 results must be a list")
    metadata = data.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    unit = str(metadata.get("timeunit", "milliseconds"))[:40].lower()
    if unit not in _UNITS:
        raise malformed(path, f"unknown time unit {unit!r}")
    measurements: list[Measurement] = []
    values: dict[str, list[Any]] = {}
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("configuration"), dict):
            raise malformed(path, f"result {i} has no configuration")
        config = Config.of(
            {str(k): plain(v, path, f"result {i} {k}") for k, v in r["configuration"].items()}
        )
        _check_names(config, measurements[0].config if measurements else None, i, path)
        for k, v in config.items():
            values.setdefault(k, []).append(v)
        measurements.append(_measurement(r, i, config, unit, path))
    if len({m.config for m in measurements}) != len(measurements):
        raise malformed(path, "a configuration appears twice")
    # distinct_values: a parameter may take both 1 and True, which `in` would merge.
    params = {k: distinct_values(vs) for k, vs in values.items()}
    return Imported("t4", device, kernel, Problem(), params, tuple(measurements))


def _check_names(config: Config, first: Config | None, i: int, path: str) -> None:
    """Every result sets the same parameters: a campaign is one search space, and replay and
    the exports look each parameter up in every result."""
    if not config:
        raise malformed(
            path,
            f"result {i} has an empty configuration; every result names the parameter values "
            "it was measured at",
        )
    if first is not None and set(config) != set(first):
        raise malformed(
            path,
            f"result {i} sets the parameters {clip(sorted(config))} but result 0 sets "
            f"{clip(sorted(first))}; every result must set the same parameters",
        )


def _measurement(r: dict[str, Any], i: int, config: Config, unit: str, path: str) -> Measurement:
    scale = _UNITS[unit]
    outcome = T4_INVALIDITY.get(str(r.get("invalidity", "correct")))
    if outcome is None:
        raise malformed(path, f"result {i}: unknown invalidity {str(r.get('invalidity'))[:40]!r}")
    given = r.get("times")
    timings: dict[str, Any] = given if isinstance(given, dict) else {}
    compile_ms = finite_ms(timings.get("compilation"))
    if compile_ms is not None:
        compile_ms = compile_ms * scale if math.isfinite(compile_ms * scale) else None
    if outcome is not Outcome.OK:
        return Measurement(config, outcome, f"T4: {r.get('invalidity')}", compile_ms=compile_ms)
    what = "runtimes"
    times, why = run_times(timings.get("runtimes", []))
    if not times and why is None:  # Kernel Tuner writes [] where its cache entry had no "times"
        what = "'time' measurement"
        times, why = run_times(_measured_time(r))
    if why is not None:
        raise malformed(path, f"result {i} {what} {why}")
    if not times:
        raise malformed(path, f"result {i} is correct but has no runtimes nor a 'time' measurement")
    # Checked again in ms: 1e306 s is no float, and 1e-320 us is 0.
    scaled = tuple(t * scale for t in times)
    bad = next((t for t, ms in zip(times, scaled, strict=True) if not 0 < ms < math.inf), None)
    if bad is not None:
        raise malformed(path, f"result {i} {what} hold {bad!r} {unit}, not a finite time in ms")
    return Measurement(config, outcome, "", scaled, compile_ms)


def _measured_time(r: dict[str, Any]) -> list[Any]:
    """The one time in ``measurements`` (Kernel Tuner's mean ``time``), as the runs of a result
    that lists none, as a cache entry without ``times`` is read; [] if there is none."""
    given = r.get("measurements")
    for m in given if isinstance(given, list) else []:
        if isinstance(m, dict) and m.get("name") == "time":
            return [m.get("value")]
    return []


def to_t4(
    store: Store,
    kernel: str | None = None,
    device: str | None = None,
    problem: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One device/kernel/problem's results in the T4 format; a correct result's ``time``
    measurement is its median, ``runtimes`` every sample."""
    invalidity = {o: s for s, o in T4_INVALIDITY.items()}
    results = []
    for r in one_group(store, kernel=kernel, device=device, problem=problem):
        results.append(
            {
                "timestamp": stamp(r.created),
                "configuration": dict(r.config),
                "times": {
                    "compilation": r.compile_ms or 0.0,
                    "framework": 0,
                    "search_algorithm": 0,
                    "validation": 0,
                    "runtimes": list(r.times_ms),
                },
                "invalidity": invalidity.get(r.outcome, "runtime"),
                "correctness": 1 if r.ok else 0,
                "measurements": [
                    {
                        "name": "time",
                        "value": _median(r) if r.ok else None,
                        "unit": "ms",
                    }
                ],
                "objectives": ["time"],
            }
        )
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}


def _median(r: ResultRow) -> float:
    """The time perfport ranks by (as the kt-cache export's ``time``): the stored median, not
    the mean, which a slow first launch or a re-timing's samples would move."""
    return float(r.median_ms if r.median_ms is not None else np.median(r.times_ms))


def t4_text(document: Mapping[str, Any]) -> str:
    """A T4 document as JSON text; an error where it holds NaN or an infinity."""
    return strict_json(document, "a T4 file")
