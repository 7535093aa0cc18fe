"""Arrays of a search space: its parameters' values, and the configurations a mask keeps."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def as_array(values: tuple[Any, ...]) -> np.ndarray:
    """A parameter's values as the array its constraints evaluate on."""
    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    # An integer beyond int64 (a uint64 bitmask in a Kernel Tuner cache), or beyond float64
    # beside floats, stays a Python int in an object array, as strings do: exact, and
    # constraints still evaluate on it by Python's rules.
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        if all(-(1 << 63) <= v < 1 << 63 for v in values):
            return np.array(values, dtype=np.int64)
    elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        with contextlib.suppress(OverflowError):
            return np.array(values, dtype=np.float64)
    return np.array(values, dtype=object)


def first_of_each(mask: np.ndarray, axes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The combinations of positions along ``axes`` that ``mask`` keeps somewhere (numbered
    in those axes' row-major order), and the flat position in ``mask`` where each first is."""
    if len(axes) == mask.ndim:  # each configuration is its own combination
        kept = np.flatnonzero(mask)
        return kept, kept
    others = [i for i in range(mask.ndim) if i not in axes]
    shape = [mask.shape[i] for i in axes]
    rows = np.moveaxis(mask, axes, range(len(axes))).reshape(math.prod(shape), -1)
    combos = np.flatnonzero(rows.any(axis=1))
    inner = _unravel(rows[combos].argmax(axis=1), [mask.shape[i] for i in others])
    at = dict(zip(axes + others, [*_unravel(combos, shape), *inner], strict=True))
    return combos, np.ravel_multi_index([at[i] for i in range(mask.ndim)], mask.shape)


def _unravel(flat: np.ndarray, shape: Sequence[int]) -> tuple[np.ndarray, ...]:
    return np.unravel_index(flat, shape) if len(shape) else ()  # numpy refuses no axes
