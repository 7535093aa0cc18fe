"""Files given to ``perfport report --with``: the ``--json`` output of another capability's
command, recognised by its keys (no file says what wrote it), checked before anything is
written so a wrong file is a one-line error and never half a report."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from perfport._core import PerfportError


class Kind(Enum):
    """What wrote a file, named as the command that writes it."""

    WG = "wg evaluate --json"
    SELECT = "select evaluate --json"
    MODEL = "model evaluate --json"
    SPLIT = "split --sweep N --json"


# The keys each result (or, for a split, the file) must have: enough to tell the kinds apart
# and everything the report's figures read, so a recognised file always draws.
_RESULT_KEYS = {
    Kind.WG: ("method", "partition", "performance", "scenarios"),
    Kind.SELECT: ("normalisation", "pruning", "classifier", "k", "performance"),
    Kind.MODEL: ("variant", "device", "points"),
}
_SPLIT_KEYS = ("kernel", "devices", "parts", "adjusted_factors", "measured_ms", "sweep")
ACCEPTED = ", ".join(f"'perfport {k.value}'" for k in Kind)


@dataclass(frozen=True)
class Attached:
    """One file given with ``--with``: its kind and its JSON."""

    kind: Kind
    path: str
    data: Mapping[str, Any]


def recognise(data: Any) -> Kind | None:
    """The kind of a command's JSON output, or None when it is none of them."""
    if not isinstance(data, Mapping):
        return None
    if all(k in data for k in _SPLIT_KEYS) and isinstance(data["sweep"], list):
        return Kind.SPLIT
    results = data.get("results")
    if not isinstance(results, list) or not results or not isinstance(results[0], Mapping):
        return None
    for kind, keys in _RESULT_KEYS.items():
        if all(k in results[0] for k in keys):
            return kind
    return None


def _checked(kind: Kind, data: Mapping[str, Any], path: str) -> None:
    """Every result of a recognised file has what the figures read (a hand-edited or cut
    file fails here, naming what is missing, not in the middle of drawing)."""
    if kind is Kind.SPLIT:
        bad = [p for p in data["sweep"]
               if not isinstance(p, Mapping) or not {"share", "measured_ms"} <= set(p)]  # fmt: skip
        what = "sweep point without 'share' and 'measured_ms'"
    else:
        keys = set(_RESULT_KEYS[kind])
        bad = [r for r in data["results"] if not isinstance(r, Mapping) or not keys <= set(r)]
        what = f"result without {', '.join(sorted(keys))}"
        if kind is Kind.MODEL and not bad:
            point = {"sizes", "measured_ms", "predicted_ms", "rel_error"}
            bad = [r for r in data["results"] if not isinstance(r["points"], list)
                   or any(not isinstance(p, Mapping) or not point <= set(p) for p in r["points"])]  # fmt: skip
            what = f"point without {', '.join(sorted(point))}"
    if bad:
        raise PerfportError(f"--with {path}: a 'perfport {kind.value}' file with a {what}; "
                            "give the command's output unchanged")  # fmt: skip
    wrong = _typed(kind, data)
    if wrong:
        raise PerfportError(f"--with {path}: in this 'perfport {kind.value}' file {wrong}; "
                            "give the command's output unchanged")  # fmt: skip


# What the figures and tables read of each result, and of what type, so a wrong-typed value
# (a hand edit, another tool's output) is refused here in one line, not a traceback mid-page.
# "number" is a finite int or float; "number?" may also be null; "text" a string.
_RESULT_TYPES: dict[Kind, dict[str, str]] = {
    Kind.WG: {"method": "text", "partition": "text", "performance": "number",
              "scenarios": "number", "speedup_over_baseline": "number?",
              "speedup_over_expert": "number?", "accuracy": "number?", "validity": "number?",
              "refused": "number?", "performance_ci95": "interval?", "per_device": "groups?",
              "per_kernel": "groups?"},
    Kind.SELECT: {"normalisation": "text", "pruning": "text", "classifier": "text",
                  "k": "number", "performance": "number", "max_achievable": "number?",
                  "worst": "number?", "performance_ci95": "interval?"},
    Kind.MODEL: {"variant": "text", "device": "text", "points": "list",
                 "geomean_rel_error": "number?"},
}  # fmt: skip
_POINT_TYPES = {"measured_ms": "number", "predicted_ms": "number", "rel_error": "number",
                "terms": "numbers?"}  # fmt: skip
# What the model section reads beside the results: the file's top level, its model and
# each calibration.
_MODEL_TYPES = {"model": "object?", "calibrations": "list?", "misranked": "texts?"}
_EXPRESSION_TYPES = {"expression": "text?"}
_CALIBRATION_TYPES = {"device": "text?", "parameters": "numbers?", "residual": "number?",
                      "n_measurements": "number?"}  # fmt: skip
_SPLIT_TYPES = {"measured_ms": "number", "devices": "list", "parts": "list",
                "adjusted_factors": "list"}  # fmt: skip
_WHAT = {"number": "a finite number", "text": "a string", "list": "a list",
         "object": "an object", "numbers": "an object of finite numbers or nulls",
         "texts": "a list of strings",
         "interval": "a list of two numbers", "groups": "an object of {name: {performance, "
         "scenarios}}"}  # fmt: skip


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _fits(v: Any, want: str) -> bool:
    if want.endswith("?"):
        return v is None or _fits(v, want[:-1])
    if want == "number":
        return _number(v)
    if want == "text":
        return isinstance(v, str)
    if want == "list":
        return isinstance(v, list)
    if want == "object":
        return isinstance(v, Mapping)
    if want == "numbers":
        # null is how --json writes a non-finite value
        return isinstance(v, Mapping) and all(x is None or _number(x) for x in v.values())
    if want == "texts":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if want == "interval":  # read as [low, high]; either end may be null
        return isinstance(v, list) and len(v) >= 2 and all(x is None or _number(x) for x in v[:2])
    return isinstance(v, Mapping) and all(  # groups: per_device, per_kernel
        isinstance(g, Mapping) and _number(g.get("performance")) and _number(g.get("scenarios"))
        for g in v.values()
    )


def _wrong(fields: Mapping[str, str], obj: Mapping[str, Any], where: str) -> str | None:
    """'<where>.<field> is <value>, not <type>' for the first field of the wrong type."""
    for name, want in fields.items():
        if not _fits(obj.get(name), want):
            shown = json.dumps(obj.get(name), default=str)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            return f"{where}.{name} is {shown}, not {_WHAT[want.rstrip('?')]}"
    return None


def _typed(kind: Kind, data: Mapping[str, Any]) -> str | None:
    """The first value the report would read of the wrong type, named, or None."""
    if kind is Kind.SPLIT:
        wrong = _wrong(_SPLIT_TYPES, data, "")
        parts = data["parts"] if isinstance(data["parts"], list) else []
        factors = data["adjusted_factors"] if isinstance(data["adjusted_factors"], list) else []
        if wrong is None and not all(isinstance(p, list) and len(p) >= 2
                                     and _number(p[0]) and _number(p[1]) for p in parts):  # fmt: skip
            wrong = ".parts is not a list of [start, end] numbers"
        if wrong is None and not all(_number(f) for f in factors):
            wrong = ".adjusted_factors is not a list of finite numbers"
        for i, point in enumerate(data["sweep"]):
            wrong = wrong or _wrong({"share": "number", "measured_ms": "number"}, point,
                                    f"sweep[{i}]")  # fmt: skip
        return wrong.lstrip(".") if wrong else None
    if kind is Kind.MODEL:
        wrong = _model_wrong(data)
        if wrong:
            return wrong
    for i, r in enumerate(data["results"]):
        wrong = _wrong(_RESULT_TYPES[kind], r, f"results[{i}]")
        if wrong or kind is not Kind.MODEL:
            if wrong:
                return wrong
            continue
        for j, point in enumerate(r["points"]):
            where = f"results[{i}].points[{j}]"
            sizes = point.get("sizes")
            if not (isinstance(sizes, Mapping) and sizes and all(map(_number, sizes.values()))):
                return f"{where}.sizes is not an object of finite numbers"
            wrong = _wrong(_POINT_TYPES, point, where)
            if wrong:
                return wrong
    return None


def _model_wrong(data: Mapping[str, Any]) -> str | None:
    """The first value of a model evaluation's top level, model or calibrations that the
    model section would read of the wrong type, named, or None."""
    wrong = _wrong(_MODEL_TYPES, data, "")
    if wrong is None and isinstance(data.get("model"), Mapping):
        wrong = _wrong(_EXPRESSION_TYPES, data["model"], ".model")
    for i, c in enumerate(data.get("calibrations") or ()):
        if wrong is None and not isinstance(c, Mapping):
            wrong = f".calibrations[{i}] is not an object"
        wrong = wrong or _wrong(_CALIBRATION_TYPES, c, f".calibrations[{i}]")
    return wrong.lstrip(".") if wrong else None


def read_attached(path: str | Path) -> Attached:
    """Read and recognise one file; a PerfportError (one line) names what is wrong."""
    p = Path(path)
    if not p.is_file():
        raise PerfportError(f"--with {path}: no such file; give the --json output of {ACCEPTED}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PerfportError(f"--with {path}: not JSON ({exc}); give the --json output of "
                            f"{ACCEPTED}") from None  # fmt: skip
    kind = recognise(data)
    if kind is None:
        raise PerfportError(f"--with {path}: not a file the report reads; give the --json "
                            f"output of {ACCEPTED}")  # fmt: skip
    _checked(kind, data, str(path))
    return Attached(kind, str(path), data)


def read_all(paths: Sequence[str | Path]) -> tuple[Attached, ...]:
    return tuple(read_attached(p) for p in paths)
