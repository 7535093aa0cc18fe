"""Throw-away experiments behind 2026-11-23-wg-compact.md (none is kept in perfport).

    .venv/bin/python docs/results/2026-11-23-wg-compact/experiments.py curve [DATASET.npz]
    .venv/bin/python docs/results/2026-11-23-wg-compact/experiments.py margin M [DATASET.npz]
    .venv/bin/python docs/results/2026-11-23-wg-compact/experiments.py gate POINTS [DATASET.npz]
    .venv/bin/python docs/results/2026-11-23-wg-compact/experiments.py fallbacks [DATASET.npz]
    .venv/bin/python docs/results/2026-11-23-wg-compact/experiments.py time [DATASET.npz]
    .venv/bin/python docs/results/2026-11-23-wg-compact/experiments.py nested [DATASET.npz]

- ``curve``: synthetic-to-real performance of ``performance_forest`` trained on a random 50,
  70, 85 and 100% of the synthetic scenarios (three draws each): does more of the same
  synthetic data help?
- ``margin``: ``performance_forest+fixed`` with another fallback margin (default 2.0),
  leave-one-kernel-out and synthetic-to-real, seeds 0-2.
- ``gate``: a per-device switch instead of the per-scenario fallback: a device of the training
  data gets its best fixed size when the forest's out-of-bag choices on its training
  scenarios score more than POINTS (e.g. 0.01) below that fixed size (mean log performance);
  otherwise the forest's choice.
- ``fallbacks``: seed 0, per device and partition, how often ``performance_forest+fixed``
  answers otherwise than ``performance_forest``, and what that gains (log ratio of the two
  choices' times, in %) on average, with its wins and losses.
- ``nested``: the per-device switch decided by cross-validation inside the training data
  instead: each training kernel left out in turn (forests of 30 trees), and a device gets the
  fallback where it gained on average over that device's left-out scenarios. Seeds 0-2,
  leave-one-kernel-out and synthetic-to-real; about 7 minutes.
- ``time``: one proposal of ``performance_forest`` fitted on all of the dataset: the median and
  99th percentile over every seventh scenario, three passes.
Default dataset: the shipped one; the 600 scenarios before the compact ones are
``git show ae47212:src/perfport/datasets/wg/stencils.npz > 600.npz``. Each takes 1-3 minutes on the 2-core machine.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from perfport.wg import folds, load_dataset
from perfport.wg.evaluate import _choose
from perfport._core.stats import geomean
from perfport.wg.predictors.forest import WgPerformanceForest

DATA = Path(__file__).parents[3] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"


class Gated(WgPerformanceForest):
    def __init__(self, points: float, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.points = points

    def fit(self, data):  # type: ignore[no-untyped-def]
        super().fit(data)
        v = self.vectors_
        known = np.isfinite(v)
        n, w = v.shape
        total, mass = np.zeros((n, w)), np.zeros((n, w))
        for t in range(self.trees):  # out-of-bag leaf means, tree by tree
            count, (_, leaf) = self.counts_[t], np.unique(self.leaves_[t], return_inverse=True)
            size = np.bincount(leaf, weights=count)
            sums = np.zeros((size.size, w))
            hits = np.zeros((size.size, w))
            np.add.at(sums, leaf, count[:, None] * np.where(known, v, 0.0))
            np.add.at(hits, leaf, count[:, None] * known)
            out = count == 0
            total[out] += (sums / size[:, None])[leaf[out]]
            mass[out] += (hits / size[:, None])[leaf[out]]
        with np.errstate(invalid="ignore", divide="ignore"):
            predicted = np.where(mass > 0, total / mass, np.nan)
        score = np.where(np.isfinite(data.runtimes) & np.isfinite(predicted), predicted, -np.inf)
        got = v[np.arange(n), np.argmax(score, 1)]
        x = np.asarray(data.features, dtype=np.float64)
        keys = [x[i, self.device_columns_].tobytes() for i in range(n)]
        self.trust_ = {}
        for key, fixed in self.device_fixed_.items():
            rows = np.array([k == key for k in keys]) & np.isfinite(got) & np.isfinite(v[:, fixed])
            self.trust_[key] = (got[rows] - v[rows, fixed]).mean() >= -self.points
        return self

    def propose(self, x, max_wg, refused):  # type: ignore[no-untyped-def]
        key = np.asarray(x, dtype=np.float64)[self.device_columns_].tobytes()
        if not self.trust_.get(key, True):
            fixed = self.device_fixed_[key]
            if fixed in self._candidates(max_wg, refused):
                return fixed
        return super().propose(x, max_wg, refused)


class Nested(WgPerformanceForest):
    def __init__(self, seed: int = 0) -> None:
        super().__init__(fallback=True, seed=seed)

    def fit(self, data):  # type: ignore[no-untyped-def]
        super().fit(data)
        x = np.asarray(data.features, dtype=np.float64)
        keys = [x[i, self.device_columns_].tobytes() for i in range(len(data))]
        gains: dict[bytes, list[float]] = {}
        for kernel in np.unique(data.kernel):
            train = np.flatnonzero(data.kernel != kernel)
            if not len(train):
                continue
            inner = WgPerformanceForest(trees=30, fallback=True, seed=self.seed)
            inner.fit(data.subset(train))
            for s in np.flatnonzero(data.kernel == kernel):
                inner.fallback = True
                b = _choose(inner, data, s)[0]
                inner.fallback = False
                a = _choose(inner, data, s)[0]
                gains.setdefault(keys[s], []).append(
                    np.log(data.runtimes[s, a] / data.runtimes[s, b])
                )
        self.distrust_ = {k for k, v in gains.items() if np.mean(v) > 0}
        return self

    def propose(self, x, max_wg, refused):  # type: ignore[no-untyped-def]
        key = np.asarray(x, dtype=np.float64)[self.device_columns_].tobytes()
        self.fallback = key in self.distrust_
        return super().propose(x, max_wg, refused)


def score(data, partition, seed, make):  # type: ignore[no-untyped-def]
    best = np.nanmin(data.runtimes, axis=1)
    perf = []
    for train, test in folds(data, partition, seed):
        model = make(data.subset(train), seed)
        perf += [best[s] / data.runtimes[s, _choose(model, data, s)[0]] for s in test]
    return geomean(perf) * 100


def fallbacks(data) -> None:  # type: ignore[no-untyped-def]
    best = np.nanmin(data.runtimes, axis=1)
    for partition in ("kernel", "synthetic-real"):
        chosen: dict[int, tuple[int, int]] = {}  # scenario -> (plain's size, fallback's size)
        for train, test in folds(data, partition, 0):
            plain = WgPerformanceForest(seed=0).fit(data.subset(train))
            fixed = WgPerformanceForest(fallback=True, seed=0).fit(data.subset(train))
            for s in test:
                chosen[s] = (_choose(plain, data, s)[0], _choose(fixed, data, s)[0])
        gaining = set()
        for device in sorted(set(data.device[list(chosen)])):
            rows = [s for s in chosen if data.device[s] == device]
            g = np.array([np.log(data.runtimes[s, chosen[s][0]] / data.runtimes[s, chosen[s][1]])
                          for s in rows if chosen[s][0] != chosen[s][1]]) * 100  # fmt: skip
            if len(g) and g.mean() > 0:
                gaining.add(device)
            mean = f"{g.mean():+.1f}%" if len(g) else "-"
            print(f"{partition} {device[:30]}: {len(rows)} scenarios, {len(g)} fall back, "
                  f"gain {mean}, {int((g > 0).sum())} wins, {int((g < 0).sum())} losses")  # fmt: skip
        # In hindsight: the fallback only on the set-ups where it gained.
        perf = [best[s] / data.runtimes[s, chosen[s][data.device[s] in gaining]] for s in chosen]
        print(f"{partition}: the fallback only on {sorted(gaining)}: {geomean(perf) * 100:.2f}%")


def proposal_time(data) -> None:  # type: ignore[no-untyped-def]
    model = WgPerformanceForest().fit(data)
    times = []
    for _ in range(3):
        for s in range(0, len(data), 7):
            started = time.perf_counter()
            model.propose(data.features[s], int(data.max_wg[s]), set())
            times.append((time.perf_counter() - started) * 1000)
    print(f"{len(data)} scenarios: one proposal {np.median(times):.3f} ms median, "
          f"{np.percentile(times, 99):.3f} ms p99")  # fmt: skip


def main() -> None:
    what = sys.argv[1]
    arg = float(sys.argv[2]) if what not in ("curve", "fallbacks", "time", "nested") else None
    data = load_dataset(
        sys.argv[3 if arg is not None else 2]
        if len(sys.argv) > (3 if arg is not None else 2)
        else DATA
    )
    if what == "fallbacks":
        fallbacks(data)
        return
    if what == "time":
        proposal_time(data)
        return
    if what == "curve":
        train, test = next(folds(data, "synthetic-real"))
        best = np.nanmin(data.runtimes, axis=1)
        for fraction in (0.5, 0.7, 0.85, 1.0):
            values = []
            for seed in range(3):
                rows = np.random.default_rng(seed).choice(
                    train, int(len(train) * fraction), replace=False
                )
                model = WgPerformanceForest(seed=seed).fit(data.subset(np.sort(rows)))
                values.append(
                    geomean([best[s] / data.runtimes[s, _choose(model, data, s)[0]] for s in test])
                    * 100
                )
            print(
                f"{fraction:.2f} of the synthetic scenarios: "
                + " / ".join(f"{v:.1f}" for v in values)
                + f", mean {np.mean(values):.2f}"
            )
        return
    if what == "nested":
        make = lambda d, seed: Nested(seed).fit(d)  # noqa: E731
    elif what == "margin":
        make = lambda d, seed: WgPerformanceForest(fallback=True, margin=arg, seed=seed).fit(d)  # noqa: E731
    else:
        make = lambda d, seed: Gated(arg, seed).fit(d)  # noqa: E731
    for partition in ("kernel", "synthetic-real"):
        values = [score(data, partition, seed, make) for seed in range(3)]
        print(
            f"{what} {arg}: {partition} "
            + " / ".join(f"{v:.2f}" for v in values)
            + f", mean {np.mean(values):.2f}"
        )


if __name__ == "__main__":
    main()
