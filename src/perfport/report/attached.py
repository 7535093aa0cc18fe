"""Files given to ``perfport report --with``: the ``--json`` output of another capability's
command, recognised by its keys (no file says what wrote it), checked before anything is
written so a wrong file is a one-line error and never half a report."""

from __future__ import annotations

import json
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
        bad = [p for p in data["sweep"] if not {"share", "measured_ms"} <= set(p or ())]
        what = "sweep point without 'share' and 'measured_ms'"
    else:
        keys = set(_RESULT_KEYS[kind])
        bad = [r for r in data["results"] if not isinstance(r, Mapping) or not keys <= set(r)]
        what = f"result without {', '.join(sorted(keys))}"
        if kind is Kind.MODEL and not bad:
            point = {"sizes", "measured_ms", "predicted_ms", "rel_error"}
            bad = [r for r in data["results"] if any(not point <= set(p) for p in r["points"])]
            what = f"point without {', '.join(sorted(point))}"
    if bad:
        raise PerfportError(f"--with {path}: a 'perfport {kind.value}' file with a {what}; "
                            "give the command's output unchanged")  # fmt: skip


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
