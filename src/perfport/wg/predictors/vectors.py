"""Performance vectors: what the k-nearest-neighbour and forest predictors learn from.

A scenario's vector holds log(t_oracle / t_w) for every size w: 0 at the oracle, negative
elsewhere. Unlike an oracle label it keeps the near ties and the sizes that are bad everywhere.
"""

from __future__ import annotations

import numpy as np

from perfport.wg.dataset import WgDataset

REFUSED_LOG = np.log(0.5)  # a refused size: half the speed of the scenario's worst size that ran


def performance_vectors(data: WgDataset) -> np.ndarray:
    """(S, W) log(t_oracle / t_w): 0 at the oracle, negative elsewhere; refused sizes (within
    the scenario's limit but did not run) well below the worst that ran; NaN above the limit."""
    runtimes = data.runtimes
    legal = np.isfinite(runtimes)
    oracle = np.nanmin(np.where(legal, runtimes, np.nan), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        vectors = np.log(oracle[:, None] / runtimes)
    worst = np.nanmin(np.where(legal, vectors, np.nan), axis=1)
    refused = data.valid & ~legal
    vectors = np.where(refused, (worst + REFUSED_LOG)[:, None], vectors)
    return np.where(legal | refused, vectors, np.nan)


def best_fixed(vectors: np.ndarray, rows: np.ndarray) -> int:
    """The size with the best mean log relative performance over ``rows`` among those within
    every one of their limits (a size above some scenario's limit is never a fixed choice)."""
    order = fixed_order(vectors, rows)
    return int(order[0]) if len(order) else 0


def fixed_order(vectors: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The sizes ``best_fixed`` may choose, best first (ties in column order): where the best
    is not legal for a scenario (too wide for its data, say), the fixed choice is the first
    one that is."""
    block = vectors[rows]
    everywhere = np.isfinite(block).all(0)
    if not everywhere.any():
        everywhere = np.isfinite(block).any(0)
    score = np.where(everywhere, np.nanmean(np.where(everywhere, block, 0.0), axis=0), -np.inf)
    order = np.argsort(-score, kind="stable")
    return order[np.isfinite(score[order])]


def covering_sizes(vectors: np.ndarray, rows: np.ndarray, count: int) -> list[int]:
    """``count`` sizes chosen greedily so that the best of them reaches as much of each
    scenario of ``rows``'s oracle as possible (geometric mean over the scenarios): a candidate
    set that measures a few sizes instead of all and still finds nearly every scenario's best.
    Each step adds the size that raises that mean most; a size a scenario cannot run counts as
    its refused value there, one above its limit as never chosen."""
    if count < 1:
        raise ValueError(f"a candidate set needs at least 1 size, not {count}")
    block = vectors[rows]
    block = np.where(np.isfinite(block), block, -np.inf)
    reach = np.full(len(block), -np.inf)
    chosen: list[int] = []
    for _ in range(min(count, block.shape[1])):
        with np.errstate(invalid="ignore"):
            # Scenarios that no chosen size reaches yet weigh in at their refused floor.
            gain = np.maximum(reach[:, None], block)
            score = np.where(np.isfinite(gain), gain, 2 * REFUSED_LOG).mean(0)
        score[chosen] = -np.inf
        w = int(np.argmax(score))
        chosen.append(w)
        reach = np.maximum(reach, block[:, w])
    return chosen
