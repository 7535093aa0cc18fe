"""Problem lists: many problems of one kernel, for sweeps (``perfport sweep``).

A problem file is a CSV whose header names problem values (``M,N,K,batch,trans_a,trans_b``);
lines starting with ``#`` are comments. Values read as bool (true/false), int, float or string.
Named sets ship with perfport: ``lawson-gemm``, the 431 GEMM shapes (299 distinct M, N, K,
batch) of the VGG, ResNet and MobileNet layers of Lawson's kernel-selection paper.
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path
from typing import Any

from perfport._core import SpecError

_SETS = {"lawson-gemm": "gemm_sizes.csv"}
_METADATA = {"networks"}  # columns of the shipped sets that describe, not define, a problem


def problem_sets() -> tuple[str, ...]:
    return tuple(_SETS)


def load_problems(source: str | Path) -> list[dict[str, Any]]:
    """The problems of a named set or of a CSV file, in file order."""
    if str(source) in _SETS:
        text = resources.files("perfport.kernels.data").joinpath(_SETS[str(source)]).read_text()
        return [
            {k: v for k, v in p.items() if k not in _METADATA} for p in _parse(text, str(source))
        ]
    path = Path(source)
    if not path.is_file():
        raise SpecError(
            f"no problem file {source}; give a CSV with a header of problem names, or one of: "
            + ", ".join(_SETS)
        )
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's BOM
    except UnicodeDecodeError as exc:  # a binary file given by mistake
        raise SpecError(f"{path}: not a text CSV file ({exc.reason}); give a CSV with a "
                        "header of problem names") from None  # fmt: skip
    return _parse(text, str(path))


def _parse(text: str, where: str) -> list[dict[str, Any]]:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        rows = list(csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True))
    except csv.Error as exc:  # e.g. a field over the csv module's size limit
        raise SpecError(f"{where}: not a problem CSV ({exc}); give one problem a line") from None
    if len(rows) < 2:
        raise SpecError(f"{where}: a problem file needs a header line and at least one problem")
    header = [h.strip() for h in rows[0]]
    if any(not h for h in header) or len(set(header)) != len(header):
        raise SpecError(f"{where}: the header must name each column once, got {rows[0]}")
    out = []
    for n, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise SpecError(
                f"{where}: problem line {n} has {len(row)} values for {len(header)} columns"
            )
        out.append({h: _value(x.strip()) for h, x in zip(header, row, strict=True)})
    return out


def _value(raw: str) -> bool | int | float | str:
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw
