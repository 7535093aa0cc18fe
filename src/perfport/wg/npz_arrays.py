"""Arrays read from a user's .npz file (a dataset, a samples file), each checked for the
kind of value and the dimensions it must have and converted to the type the code computes
in, so that a hand-made or foreign file fails in one line naming the file, the array and
the fix, not in numpy or scikit-learn later."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

from perfport._core import SpecError


class Held(Enum):
    """What an array's values are."""

    NUMBER = "real numbers"  # computed in float64
    WHOLE = "whole numbers"  # int64
    NAME = "printable names (strings)"
    FLAG = "true/false flags"


@dataclass(frozen=True)
class Expected:
    held: Held
    ndim: int


# numpy's dtype kinds, in words
_FOUND = {"b": "true/false values", "i": "integers", "u": "integers", "f": "floats",
          "c": "complex numbers", "U": "strings", "S": "bytes", "M": "dates",
          "m": "time spans", "V": "raw records", "O": "objects"}  # fmt: skip


def _converted(array: np.ndarray, held: Held) -> np.ndarray | str:
    """``array`` as ``held`` computes it, or what it holds instead (in words)."""
    kind = array.dtype.kind
    found = _FOUND.get(kind, str(array.dtype))
    if array.size == 0:  # numpy makes an empty list floats: the kind says nothing
        empty = {Held.NUMBER: np.float64, Held.WHOLE: np.int64, Held.NAME: np.str_}
        return array.astype(empty.get(held, np.bool_))
    if held is Held.NAME:
        if kind != "U":
            return found
        # a name is printed to the terminal and the report: an escape code would act there
        odd = next((n for n in array.flat if any(ord(c) < 32 or ord(c) == 127 for c in n)), None)
        return array if odd is None else f"a name with a control character ({str(odd)!r})"
    if held is Held.FLAG and kind == "b":
        return array
    if kind not in "iuf":
        return found
    values = array.astype(np.float64)
    if held is Held.NUMBER:
        return values
    if held is Held.FLAG:
        return array.astype(np.bool_) if np.isin(values, (0, 1)).all() else f"{found} besides 0, 1"
    whole = np.isfinite(values) & (values == np.round(values))
    if not whole.all():
        return f"{found} such as {values[~whole][0]:g}"
    if np.abs(values).max() >= 2.0**63:
        return f"{found} beyond 64 bits"
    return array.astype(np.int64)


def checked_array(path: str | Path, name: str, array: np.ndarray, expected: Expected,
                  fix: str) -> np.ndarray:  # fmt: skip
    """``array`` (the file's ``name``) converted, or SpecError naming what is wrong."""
    if array.ndim != expected.ndim:
        raise SpecError(f"{path}: the array '{name}' has {array.ndim} dimension(s) (shape "
                        f"{array.shape}), not {expected.ndim}; {fix}")  # fmt: skip
    converted = _converted(array, expected.held)
    if isinstance(converted, str):
        raise SpecError(f"{path}: the array '{name}' holds {converted}, not "
                        f"{expected.held.value}; {fix}")  # fmt: skip
    return converted


def check_rows(path: str | Path, arrays: Mapping[str, np.ndarray], names: Sequence[str],
               rows: int, of: str, fix: str) -> None:  # fmt: skip
    """Each of ``names`` has ``rows`` rows (one per row of the array ``of``), else SpecError:
    a shorter label array would fail as an IndexError deep in an evaluation."""
    for name in names:
        if len(arrays[name]) != rows:
            raise SpecError(f"{path}: the array '{name}' has {len(arrays[name])} rows for the "
                            f"{rows} rows of '{of}' (one per scenario); {fix}")  # fmt: skip
