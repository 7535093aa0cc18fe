"""Per-problem normalisation of times into performance in [0, 1] (Lawson, section 3.4).

Raw times span orders of magnitude between problem sizes, so problems are compared by how
each configuration does relative to that problem's best. The three sparse variants keep only
configurations near the best, so that clustering learns from good configurations and ignores
how bad the bad ones are.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

CUTOFF = 0.9  # the paper's threshold: under 90% of the best counts as 0
SIGMOID_MIDPOINT = 0.85  # the paper's sigmoid maps 85% of the best to 0.5 ...
SIGMOID_SLOPE = 50.0  # ... and everything under 80% to less than 0.1


class Normalisation(Enum):
    RELATIVE = "relative"  # t_best / t
    RAW_CUTOFF = "raw_cutoff"  # t_best / t where it is >= 0.9, else 0: values in {0} U [0.9, 1]
    STANDARD_CUTOFF = "standard_cutoff"  # the raw cutoff rescaled: (p - 0.9) / 0.1, else 0
    SIGMOID = "sigmoid"  # 1 / (1 + exp(50 (0.85 - p))) of p = t_best / t


def relative(times: np.ndarray) -> np.ndarray:
    """t_best / t per problem row; a failed or unmeasured configuration (NaN) is 0, and a row
    with no result at all is all 0."""
    t = np.asarray(times, dtype=np.float64)
    ok = np.isfinite(t) & (t > 0)
    safe = np.where(ok, t, np.inf)
    best = safe.min(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        perf = np.where(ok, best / safe, 0.0)
    return np.nan_to_num(perf, nan=0.0, posinf=0.0)


def normalise(times: np.ndarray, how: Normalisation | str = Normalisation.RELATIVE) -> np.ndarray:
    """Performance in [0, 1] of each configuration (column) at each problem (row), with the
    row's best at 1 (or, for the sigmoid, at f(1) ~ 1) and NaN times at 0."""
    how = Normalisation(how)
    perf = relative(times)
    if how is Normalisation.RELATIVE:
        return perf
    if how is Normalisation.RAW_CUTOFF:
        return np.where(perf >= CUTOFF, perf, 0.0)
    if how is Normalisation.STANDARD_CUTOFF:
        return np.where(perf >= CUTOFF, (perf - CUTOFF) / (1.0 - CUTOFF), 0.0)
    # The sigmoid of a failed configuration would be f(0) ~ 4e-19, not 0; keep failures at 0
    # like every other normalisation.
    sig = 1.0 / (1.0 + np.exp(SIGMOID_SLOPE * (SIGMOID_MIDPOINT - perf)))
    return np.where(perf > 0, sig, 0.0)
