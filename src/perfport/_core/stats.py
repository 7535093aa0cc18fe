"""Summary statistics of timing samples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stats:
    """Summary of n timing samples in milliseconds. ``ci_low``/``ci_high`` bound the median
    with at least 95% confidence (distribution-free: order statistics of a binomial), because
    kernel times are skewed and a mean-based interval would be misleading. No interval of
    fewer than ``MIN_CI_SAMPLES`` samples reaches 95%: theirs is the samples' range, which
    holds the median with probability 1 - 2^(1-n) (94% at five)."""

    n: int
    min: float
    median: float
    mean: float
    std: float
    ci_low: float
    ci_high: float


@lru_cache(maxsize=1024)
def _median_ci_rank(n: int, confidence: float = 0.95) -> int:
    """Largest 1-based rank j with P(j <= median rank <= n-j+1) >= confidence; 0 where even
    the samples' range falls short (n < ``MIN_CI_SAMPLES`` at 95%)."""
    alpha = (1.0 - confidence) / 2.0
    if n > 1000:
        return math.floor(n / 2 - 1.959964 * math.sqrt(n) / 2)
    cdf, j = 0.0, 0
    for k in range(n + 1):
        cdf += math.comb(n, k) * 0.5**n
        if cdf > alpha:
            break
        j = k + 1
    return j


MIN_CI_SAMPLES = next(n for n in range(1, 64) if _median_ci_rank(n) >= 1)


# Up to this many samples plain Python is several times faster than numpy's per-call overhead;
# importing a cache summarises hundreds of thousands of entries of 10 to 32 runs each.
_SMALL = 64


def summarize(times_ms: Sequence[float]) -> Stats:
    """Summarise samples (at least one)."""
    n = len(times_ms)
    if n == 0:
        raise ValueError("no samples to summarise")
    j = max(1, _median_ci_rank(n))  # below MIN_CI_SAMPLES: the range
    small = sorted(map(float, times_ms)) if n <= _SMALL else None
    if small is not None and all(map(math.isfinite, small)):  # sorted() misorders NaN
        mean = math.fsum(small) / n
        spread = math.fsum((v - mean) ** 2 for v in small)
        return Stats(
            n=n, min=small[0], median=(small[(n - 1) // 2] + small[n // 2]) / 2, mean=mean,
            std=math.sqrt(spread / (n - 1)) if n > 1 else 0.0,
            ci_low=small[j - 1], ci_high=small[n - j],
        )  # fmt: skip
    x = np.sort(np.asarray(times_ms, dtype=np.float64))
    return Stats(
        n=n,
        min=float(x[0]),
        median=float(np.median(x)),
        mean=float(x.mean()),
        std=float(x.std(ddof=1)) if n > 1 else 0.0,
        ci_low=float(x[j - 1]),
        ci_high=float(x[n - j]),
    )


def geomean(values: Sequence[float] | np.ndarray) -> float:
    """Geometric mean of the finite, positive ``values`` (the others are left out); NaN if
    none is."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if len(v) else float("nan")


def floored_geomean(values: np.ndarray, floor: float, axis: int | None = None) -> Any:
    """Geometric mean with every value raised to at least ``floor`` first, so a failure (0)
    costs a fixed penalty instead of zeroing the mean; a float, or an array along ``axis``."""
    means = np.exp(np.log(np.maximum(np.asarray(values, dtype=np.float64), floor)).mean(axis))
    return float(means) if axis is None else means


def bootstrap_geomean_ci(
    ratios: np.ndarray, seed: int = 0, level: float = 0.95, resamples: int = 2000
) -> tuple[float, float]:
    """Percentile bootstrap interval of the geometric mean of ``ratios`` (each a fraction of
    an optimum, say), resampling them as independent draws; non-finite and non-positive values
    are left out. NaN with fewer than two values."""
    ratios = np.asarray(ratios, dtype=np.float64)
    logs = np.log(ratios[np.isfinite(ratios) & (ratios > 0)])
    if len(logs) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    # A few hundred resamples at a time keep memory at that many copies of the data.
    means = np.concatenate([
        logs[rng.integers(len(logs), size=(min(256, resamples - done), len(logs)))].mean(1)
        for done in range(0, resamples, 256)
    ])  # fmt: skip
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(np.exp(low)), float(np.exp(high))
