"""Choosing the k configurations to ship (Lawson, section 4).

Every method works on a normalised performance matrix (rows: problems or devices, columns:
configurations, values in [0, 1], see ``normalise``) and returns k distinct column indices:

- ``top_n``: the k configurations that are best at the most rows (the hand-picking baseline).
- ``kmeans``, ``pca_kmeans``: cluster the rows; each centroid (mapped back from PCA space)
  votes for its best configuration.
- ``spectral``, ``hdbscan``: cluster the rows; each cluster votes for the configuration with
  the best geometric mean over its members. HDBSCAN has no cluster count, so a bounded sweep
  of its hyper-parameters looks for one that gives k clusters.
- ``decision_tree``: a regression tree of at most k leaves from problem features to the whole
  performance vector; each leaf's mean vector votes for its best configuration.
- ``greedy`` (not in the paper): no clustering; the k configurations that, added one at a
  time, most raise the geometric mean over all rows of the best performance within the set
  (on ``relative`` performance, the set's max achievable). On perfport's H100 GEMM data its
  sets have a higher limit than the clusterings', which a tree selector turns into the best
  held-out performance at k = 8 (docs/results/2026-11-23-lawson-gemm-recheck.md).

Votes are taken from the largest cluster down. Where clusters agree (two vote for the same
configuration) or there are fewer than k clusters, the set is filled greedily with the
configuration that most raises the geometric mean, over all rows, of the best performance
within the set. A configuration with no correct result at any row is never chosen, so the
result has min(k, configurations that ran) entries. Ties (in the fill, in Top-N's counts) go
to the configuration that failed at the fewest rows, then to the best geometric mean of its
own performance, then to the lower index: once the set reaches every row's optimum, every
gain is 0, and the rest of the set is what a Dispatcher falls back to.
"""

from __future__ import annotations

import hashlib
import threading
import warnings
from enum import Enum

import numpy as np

from perfport._core.optional import require, sklearn
from perfport._core.stats import floored_geomean
from perfport.select.errors import SelectError

# Floor of a performance value inside a geometric mean: a configuration that fails (0) at a
# member counts as 1000x slower there, bad enough to lose, finite so that ranks still differ.
GEOMEAN_FLOOR = 1e-3
# HDBSCAN's sweep: 14 x 4 x 2 = 112 fits on a precomputed distance matrix (about 0.5 s for
# 350 rows, once per matrix); small sizes first, so that ties go to the finest clustering.
HDBSCAN_MIN_CLUSTER_SIZE = (2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, 50)
HDBSCAN_MIN_SAMPLES = (1, 2, 4, 8)
HDBSCAN_SELECTION = ("eom", "leaf")
PCA_VARIANCE = 0.95  # components kept by pca_kmeans: the paper's Fig. 3 reads 95% at ~14


class Pruning(Enum):
    TOP_N = "top_n"
    KMEANS = "kmeans"
    PCA_KMEANS = "pca_kmeans"
    SPECTRAL = "spectral"
    HDBSCAN = "hdbscan"
    DECISION_TREE = "decision_tree"
    GREEDY = "greedy"


_PURPOSE = "Kernel-subset selection"  # named in the missing-extra error


def choose(
    norm: np.ndarray,
    k: int,
    method: Pruning | str = Pruning.KMEANS,
    seed: int = 0,
    features: np.ndarray | None = None,
    perf: np.ndarray | None = None,
) -> np.ndarray:
    """``min(k, configurations that ran)`` distinct column indices of ``norm`` (rows x
    configurations, values in [0, 1]) chosen by ``method``, in the order they were chosen.
    ``features`` (rows x features) is needed by ``decision_tree`` only. ``perf``, the same
    cells as t_best / t with 0 where a configuration failed (``relative``), says which
    configurations ran and breaks ties; it defaults to ``norm``, which a cutoff zeroes for
    slow configurations too. Deterministic for a given ``seed``."""
    method = Pruning(method)
    norm = np.asarray(norm, dtype=np.float64)
    if norm.ndim != 2 or norm.shape[0] == 0 or norm.shape[1] == 0:
        raise SelectError(
            f"choose needs a non-empty rows x configurations matrix, got {norm.shape}"
        )
    if k < 1:
        raise SelectError(f"the number of configurations to choose must be at least 1, got {k}")
    norm = np.nan_to_num(norm, nan=0.0)
    perf = norm if perf is None else np.nan_to_num(np.asarray(perf, dtype=np.float64), nan=0.0)
    if perf.shape != norm.shape:
        raise SelectError(f"perf is {perf.shape} but norm is {norm.shape}; give the same cells")
    ran: np.ndarray = np.asarray((perf > 0).any(axis=0))
    if not ran.any():
        raise SelectError(
            "no configuration has a correct result at any problem, so none can be chosen; "
            "measure configurations that compile and pass the check first"
        )
    # Fewer than k only when fewer ran at all: a configuration that never ran correctly would
    # make a Dispatcher raise wherever it is the pick or the fallback.
    target = min(k, int(ran.sum()))
    rank = _tie_rank(perf)
    if method is Pruning.TOP_N:
        return _top_n(norm, target, perf, rank)
    if method is Pruning.GREEDY:
        return _fill(norm, [], target, ran, rank)
    if method is Pruning.DECISION_TREE:
        if features is None or len(features) != len(norm):
            raise SelectError("decision_tree pruning needs one row of problem features per row")
        votes = _tree_votes(norm, np.asarray(features, dtype=np.float64), target, seed)
        return _fill(norm, votes, target, ran, rank)
    # Rows where nothing ran carry no information and would form a cluster of their own.
    active = norm[norm.max(axis=1) > 0]
    if len(active) == 0:
        return _fill(norm, [], target, ran, rank)
    clusters = min(target, len(active))
    threadpoolctl = require("threadpoolctl", "models", "Kernel-subset selection")
    # One thread: on a few hundred rows, k-means' OpenMP threads cost more to start than they
    # save, and are many times slower when another process holds a core.
    with warnings.catch_warnings(), threadpoolctl.threadpool_limits(1):
        # Small or duplicated inputs make sklearn warn (disconnected graphs, fewer distinct
        # points than clusters); the fill below copes with whatever clusters come back.
        warnings.simplefilter("ignore")
        if method is Pruning.KMEANS:
            votes = _kmeans_votes(active, clusters, seed, pca=False)
        elif method is Pruning.PCA_KMEANS:
            votes = _kmeans_votes(active, clusters, seed, pca=True)
        elif method is Pruning.SPECTRAL:
            votes = _label_votes(active, _spectral_labels(active, clusters, seed))
        else:
            votes = _label_votes(active, _hdbscan_labels(active, target))
    return _fill(norm, votes, target, ran, rank)


def set_score(norm: np.ndarray, chosen: np.ndarray | list[int]) -> float:
    """Geometric mean over rows of the best value within ``chosen`` (floored): the quantity the
    fill maximises; on ``relative`` performance, what an oracle restricted to the set reaches."""
    best = np.asarray(norm)[:, np.asarray(chosen, dtype=int)].max(axis=1)
    return float(floored_geomean(best, GEOMEAN_FLOOR))


def _tie_rank(perf: np.ndarray) -> np.ndarray:
    """Each configuration's place (0 first) by fewest failed rows, then best geometric mean of
    its own performance, then lowest index: how ties between configurations are broken."""
    failed = (perf <= 0).sum(axis=0)
    order = np.lexsort(
        (np.arange(perf.shape[1]), -floored_geomean(perf, GEOMEAN_FLOOR, axis=0), failed)
    )
    rank = np.empty(perf.shape[1], dtype=np.intp)
    rank[order] = np.arange(perf.shape[1])
    return rank


def _top_n(norm: np.ndarray, target: int, perf: np.ndarray, rank: np.ndarray) -> np.ndarray:
    active = norm[norm.max(axis=1) > 0]
    counts = np.bincount(active.argmax(axis=1), minlength=norm.shape[1])
    # Ties in the count (and configurations never best) go to the one that failed at fewer
    # rows, then to the better geometric mean, then to the tie rank; configurations that
    # never ran come last, and the caller's target cuts them.
    failed = (perf <= 0).sum(axis=0)
    order = np.lexsort((rank, -floored_geomean(norm, GEOMEAN_FLOOR, axis=0), failed, -counts))
    return order[:target].astype(np.intp)


def _kmeans_votes(active: np.ndarray, clusters: int, seed: int, pca: bool) -> list[int]:
    data = active
    reducer = None
    if pca and min(active.shape) > 1:
        reducer = sklearn("decomposition", _PURPOSE).PCA(
            n_components=PCA_VARIANCE, svd_solver="full", random_state=seed
        )
        data = reducer.fit_transform(active)
    model = sklearn("cluster", _PURPOSE).KMeans(n_clusters=clusters, n_init=10, random_state=seed)
    labels = model.fit_predict(data)
    centres = model.cluster_centers_
    if reducer is not None:
        centres = reducer.inverse_transform(centres)
    sizes = np.bincount(labels, minlength=clusters)
    return [int(np.argmax(centres[c])) for c in np.argsort(-sizes, kind="stable")]


def _spectral_labels(active: np.ndarray, clusters: int, seed: int) -> np.ndarray:
    if clusters < 2 or len(active) <= clusters:
        return np.zeros(len(active), dtype=int) if clusters < 2 else np.arange(len(active))
    # A k-nearest-neighbour graph: an RBF affinity with a fixed width puts every pair of
    # 640-dimensional performance vectors at ~0 similarity.
    model = sklearn("cluster", _PURPOSE).SpectralClustering(
        n_clusters=clusters,
        affinity="nearest_neighbors",
        n_neighbors=min(10, len(active) - 1),
        assign_labels="kmeans",
        random_state=seed,
    )
    return model.fit_predict(active)


def _hdbscan_labels(active: np.ndarray, target: int) -> np.ndarray:
    """Labels (-1 = noise) of the swept setting whose cluster count is nearest ``target``,
    preferring more clusters than asked (the largest are kept) to fewer, then less noise,
    then the earlier setting."""
    sweep = _hdbscan_sweep(active)
    if not sweep:  # fewer than two rows: one cluster
        return np.zeros(len(active), dtype=int)

    def rank(labels: np.ndarray) -> tuple[int, int, int]:
        found = int(labels.max()) + 1
        return abs(found - target), int(found < target), int((labels < 0).sum())

    return min(sweep, key=rank)  # min keeps the first of equal ranks


# The sweep does not depend on k, and evaluation asks for several k of the same matrix: keep
# the last few sweeps, keyed by the matrix's bytes.
_SWEEPS: dict[tuple[tuple[int, ...], bytes], list[np.ndarray]] = {}
_SWEEPS_KEPT = 4
_SWEEPS_LOCK = threading.Lock()  # evaluations may run in threads; eviction must not race


def _hdbscan_sweep(active: np.ndarray) -> list[np.ndarray]:
    key = (active.shape, hashlib.sha256(np.ascontiguousarray(active).tobytes()).digest())
    with _SWEEPS_LOCK:
        if key in _SWEEPS:
            return _SWEEPS[key]
    cluster = sklearn("cluster", _PURPOSE)
    distances = sklearn("metrics", _PURPOSE).pairwise_distances(active)
    out = []
    for selection in HDBSCAN_SELECTION:
        for min_samples in HDBSCAN_MIN_SAMPLES:
            for size in HDBSCAN_MIN_CLUSTER_SIZE:
                if size > len(active) or min_samples > len(active) - 1:
                    continue
                model = cluster.HDBSCAN(
                    min_cluster_size=size,
                    min_samples=min_samples,
                    cluster_selection_method=selection,
                    metric="precomputed",
                    copy=True,
                )
                out.append(model.fit_predict(distances))
    with _SWEEPS_LOCK:
        while len(_SWEEPS) >= _SWEEPS_KEPT:
            del _SWEEPS[next(iter(_SWEEPS))]
        _SWEEPS[key] = out
    return out


def _label_votes(active: np.ndarray, labels: np.ndarray) -> list[int]:
    """Per cluster, largest first, the configuration with the best geometric mean over its
    members (the paper's rule where a method gives labels rather than centres)."""
    kept = labels[labels >= 0]
    if len(kept) == 0:
        return []
    sizes = np.bincount(kept)
    return [
        int(np.argmax(floored_geomean(active[labels == c], GEOMEAN_FLOOR, axis=0)))
        for c in np.argsort(-sizes, kind="stable")
        if sizes[c] > 0
    ]


def _tree_votes(norm: np.ndarray, features: np.ndarray, target: int, seed: int) -> list[int]:
    if target < 2 or len(norm) < 2:
        return []  # a tree of one leaf is the fill's first pick
    tree = sklearn("tree", _PURPOSE).DecisionTreeRegressor(max_leaf_nodes=target, random_state=seed)
    tree.fit(features, norm)
    leaves = tree.apply(features)
    ids, sizes = np.unique(leaves, return_counts=True)
    # tree_.value[leaf] is the leaf's mean performance vector (outputs x 1).
    return [
        int(np.argmax(tree.tree_.value[ids[i], :, 0])) for i in np.argsort(-sizes, kind="stable")
    ]


def _fill(
    norm: np.ndarray, votes: list[int], target: int, ran: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    """The votes (those that ran, first come first kept), then the largest gains up to
    ``target``; equal gains go to the lower ``rank``."""
    chosen: list[int] = []
    for v in votes:
        if ran[v] and v not in chosen and len(chosen) < target:
            chosen.append(v)
    logs = np.log(np.maximum(norm, GEOMEAN_FLOOR))
    best = logs[:, chosen].max(axis=1) if chosen else np.full(len(norm), -np.inf)
    while len(chosen) < target:
        gain = np.maximum(best[:, None], logs).mean(axis=0)
        gain[chosen] = -np.inf
        gain[~ran] = -np.inf
        tied = np.flatnonzero(gain == gain.max())
        pick = int(tied[np.argmin(rank[tied])])
        chosen.append(pick)
        best = np.maximum(best, logs[:, pick])
    return np.array(chosen, dtype=np.intp)
