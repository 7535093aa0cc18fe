"""Shared helpers for the experiments in this folder: one forest fit per fold, many choice rules.

``DATA`` is the shipped dataset of this checkout; ``OUT`` the directory the scripts keep their
pickled intermediate results in: ``$WG_NOVEL_OUT`` where set, else the system's temporary
directory (never the repository).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from perfport.wg import folds, load_dataset
from perfport.wg.evaluate import _choose
from perfport._core.stats import geomean
from perfport.wg.predictors.forest import WgPerformanceForest

DATA = Path(__file__).parents[4] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"
OUT = Path(os.environ.get("WG_NOVEL_OUT") or tempfile.gettempdir())
SHORT = {
    "NVIDIA H100 80GB HBM3 (cuda)": "H100 CUDA",
    "NVIDIA H100 80GB HBM3 (opencl)": "H100 OpenCL",
    "NVIDIA H200 (opencl)": "H200 OpenCL",
    "cpu-skylake-avx512-Intel(R) Xeon(R) Processor (opencl)": "16-core Xeon",
    "pthread-Intel(R) Xeon(R) Processor (opencl)": "2-core Xeon",
}


def load():
    return load_dataset(DATA)


class Multi(WgPerformanceForest):
    """The shipped forest; ``mode`` picks the choice rule applied to its neighbours."""

    mode: tuple = ("plain",)

    def fit(self, data):  # type: ignore[no-untyped-def]
        super().fit(data)
        x = np.asarray(data.features, dtype=np.float64)
        keys = np.array([x[i, self.device_columns_].tobytes() for i in range(len(data))])
        self.dev_mean_, self.dev_var_ = {}, {}
        for key in set(keys):
            block = self.vectors_[keys == key]
            with np.errstate(invalid="ignore"), _quiet():
                self.dev_mean_[key] = np.nanmean(block, 0)
                self.dev_var_[key] = np.nanvar(block, 0, ddof=1)
        # kernel identity of each training row (same stencil on other data / devices)
        kcols = [i for i, n in enumerate(data.feature_names) if n.startswith("kernel_")]
        _, self.cluster_ = np.unique(x[:, kcols], axis=0, return_inverse=True)
        self._memo = {}
        return self

    def neighbours(self, x):  # type: ignore[no-untyped-def]
        key = np.asarray(x).tobytes()
        if key not in self._memo:
            self._memo[key] = super().neighbours(x)
        return self._memo[key]

    def stats(self, x):  # type: ignore[no-untyped-def]
        """Per size: forest mean f, weighted spread s2, Kish n_eff, cluster n_eff."""
        rows, v = self.neighbours(x)
        V = self.vectors_[rows]
        K = np.isfinite(V)
        Vz = np.where(K, V, 0.0)
        W = K * v[:, None]
        m = W.sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(m > 0, (W * Vz).sum(0) / m, np.nan)
            n_eff = m**2 / (W**2).sum(0)
            s2 = (W * (Vz - np.nan_to_num(f)) ** 2).sum(0) / m
            s2 = s2 * n_eff / np.maximum(n_eff - 1, 1e-9)
            # clustered effective count: weight summed per kernel identity
            c = self.cluster_[rows]
            _, ci = np.unique(c, return_inverse=True)
            Wc = np.zeros((ci.max() + 1, W.shape[1]))
            np.add.at(Wc, ci, W)
            n_clu = m**2 / (Wc**2).sum(0)
        return f, s2, n_eff, n_clu, V, v

    def propose(self, x, max_wg, refused):  # type: ignore[no-untyped-def]
        mode = self.mode
        if mode[0] == "fixed":
            self.fallback, self.margin = True, mode[1] if len(mode) > 1 else 2.0
            try:
                return super().propose(x, max_wg, refused)
            finally:
                self.fallback = False
        candidates = self._candidates(max_wg, refused)
        if not len(candidates):
            return self.baseline_
        f, s2, n_eff, n_clu, V, v = self.stats(x)
        dkey = np.asarray(x, dtype=np.float64)[self.device_columns_].tobytes()
        mu = self.dev_mean_.get(dkey)
        vb = self.dev_var_.get(dkey)
        if mode[0] == "plain":
            score = f
        elif mode[0] == "kish":  # (n_eff f + tau mu) / (n_eff + tau)
            tau = mode[1]
            n = n_clu if len(mode) > 2 and mode[2] == "clu" else n_eff
            score = (np.nan_to_num(n) * np.nan_to_num(f) + tau * mu) / (np.nan_to_num(n) + tau)
        elif mode[0] in ("ebm", "ebp"):
            n = n_clu if len(mode) > 1 and mode[1] == "clu" else n_eff
            noise = s2 / n if mode[0] == "ebm" else s2
            with np.errstate(invalid="ignore", divide="ignore"):
                lam = vb / (vb + noise)
            lam = np.where(np.isfinite(lam), lam, 0.0)
            score = lam * np.nan_to_num(f) + (1 - lam) * mu
        elif mode[0] == "lcb":
            beta = mode[1]
            n = n_clu if len(mode) > 2 and mode[2] == "clu" else n_eff
            score = f - beta * np.sqrt(s2 / n)
        elif mode[0] == "plcb":  # paired lower bound of the gain over the device's fixed size
            beta = mode[1]
            fx = self._fixed_for(x)
            G = V - V[:, [fx]]
            K = np.isfinite(G)
            W = K * v[:, None]
            mm = W.sum(0)
            with np.errstate(invalid="ignore", divide="ignore"):
                d = (W * np.where(K, G, 0)).sum(0) / mm
                ne = mm**2 / (W**2).sum(0)
                sd2 = (
                    (W * (np.where(K, G, 0) - np.nan_to_num(d)) ** 2).sum(0)
                    / mm
                    * ne
                    / np.maximum(ne - 1, 1e-9)
                )
                score = d - beta * np.sqrt(sd2 / ne)
            score = np.where(ne >= 2, score, np.where(np.isfinite(d) & (d > 0), 0.0, -np.inf))
            score[fx] = 0.0
            if fx not in candidates:
                score = f
        elif mode[0] == "majority":  # forest's best unless most neighbour weight prefers fixed
            fx = self._fixed_for(x)
            sc = np.where(np.isfinite(f[candidates]), f[candidates], -np.inf)
            best = int(candidates[int(np.argmax(sc))])
            if best == fx or fx not in candidates:
                return best
            g = V[:, best] - V[:, fx]
            ok = np.isfinite(g)
            if not ok.any():
                return best
            share = v[ok][g[ok] > 0].sum() / v[ok].sum()
            return best if share > 0.5 else fx
        elif mode[0] == "alpha":  # externally set per-device blend weight toward mu
            a = self.alpha_.get(dkey, 0.0)
            score = (1 - a) * np.nan_to_num(f) + a * mu
        else:
            raise ValueError(mode)
        score = score[candidates]
        score = np.where(np.isfinite(score), score, -np.inf)
        return int(candidates[int(np.argmax(score))])


class _quiet:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *a):
        self._w.__exit__(*a)


def choices(data, partition, seed, modes, make=None):
    """{mode: {scenario: column}} with one forest fit per fold."""
    out = {m: {} for m in modes}
    for train, test in folds(data, partition, seed):
        model = (make or (lambda d, s: Multi(seed=s).fit(d)))(data.subset(train), seed)
        for m in modes:
            model.mode = m
            for s in test:
                out[m][int(s)] = int(_choose(model, data, s)[0])
    return out


def perf(data, chosen):
    best = np.nanmin(data.runtimes, axis=1)
    return geomean([best[s] / data.runtimes[s, w] for s, w in chosen.items()]) * 100


def per_device(data, chosen):
    best = np.nanmin(data.runtimes, axis=1)
    res = {}
    for dev in np.unique(data.device):
        r = [best[s] / data.runtimes[s, w] for s, w in chosen.items() if data.device[s] == dev]
        if r:
            res[SHORT.get(str(dev), str(dev))] = (geomean(r) * 100, len(r))
    return res
