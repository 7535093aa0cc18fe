"""Evaluation of work-group-size predictors, as in Cummins et al. 2016, section 7.

Partitions: ``10-fold`` cross-validation over scenarios, ``synthetic-real`` (train on synthetic
kernels, test on real ones), and leave-one-out by ``device``, ``kernel`` and ``dataset``.
Each test scenario is answered as a kernel launcher would: propose a size, and while it cannot
run (too large, or refused by the driver), remember it and ask again.

Metrics per method and partition: ``performance`` (geometric mean of t_oracle / t_chosen;
``performance_arithmetic`` is its arithmetic mean, the statistic of one of Cummins' result queries,
for comparing with the thesis' tables),
``performance_ci95`` (a 95% bootstrap interval of ``performance`` over the test scenarios,
taken as independent draws: how far the figure could move with other scenarios of the same
kind; it leaves out the seed's own effect on randomised models),
``speedup_over_baseline`` (t_baseline / t_chosen; the baseline is the best size that ran in
every scenario, w(4x4) in the paper and wherever no size always ran), ``speedup_over_expert`` (over w(32x4), where it ran), ``accuracy`` (chose the
oracle), ``validity`` (the first proposal fits the maximum work-group size), ``refused`` (the
first proposal fits but does not run) and ``predict_ms`` (time to a size that runs); and
``performance`` per device label of the test scenarios (``per_device``), since one device
set-up's noisy or unpredictable optima can hide behind the others in the mean.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from perfport._core import PerfportError
from perfport._core.containers import as_list
from perfport._core.stats import bootstrap_geomean_ci, geomean
from perfport.wg.dataset import WgDataset
from perfport.wg.model import DEFAULT_METHOD
from perfport.wg.predictors import METHODS, baseline_column, check_method, make_predictor

PARTITIONS = ("10-fold", "synthetic-real", "device", "kernel", "dataset")
# What 'perfport wg evaluate' runs unless told otherwise: the default model, whose rows carry
# its speedups over the fixed sizes (the best static size and the expert's w(32x4)). The whole
# grid (METHODS) takes some 40 minutes on two cores.
DEFAULT_METHODS = (DEFAULT_METHOD,)


@dataclass(frozen=True)
class EvalProgress:
    """How far an evaluation is: ``done`` of ``total`` (method, fold) fits, the last one of
    ``method`` on ``partition``."""

    partition: str
    method: str
    done: int
    total: int


@dataclass(frozen=True)
class EvalResult:
    method: str
    partition: str
    performance: float
    performance_arithmetic: float
    speedup_over_baseline: float
    speedup_over_expert: float
    accuracy: float
    validity: float
    refused: float
    predict_ms: float
    scenarios: int
    performance_ci95: tuple[float, float] = (float("nan"), float("nan"))
    over_expert: tuple[float, ...] = field(default=(), repr=False)  # per scenario where w(32x4) ran
    # (device, performance, scenarios) per device label of the test scenarios
    per_device: tuple[tuple[str, float, int], ...] = field(default=(), repr=False)
    # (kernel, performance, scenarios) per kernel label: the report's per-kernel bars
    per_kernel: tuple[tuple[str, float, int], ...] = field(default=(), repr=False)
    # (test row, chosen column) per test scenario, for scoring the choices elsewhere (heldout)
    choices: tuple[tuple[int, int], ...] = field(default=(), repr=False)

    def to_json(self, per_device: bool = False) -> dict[str, Any]:
        out = asdict(self)
        del out["over_expert"], out["per_device"], out["per_kernel"], out["choices"]
        out["performance_ci95"] = list(self.performance_ci95)
        if per_device:
            out["per_device"] = {
                d: {"performance": p, "scenarios": n} for d, p, n in self.per_device
            }
            out["per_kernel"] = {
                k: {"performance": p, "scenarios": n} for k, p, n in self.per_kernel
            }
        return out


def folds(
    data: WgDataset, partition: str, seed: int = 0
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(train rows, test rows) for each fold of a partition."""
    rows = np.arange(len(data))
    if partition == "10-fold":
        order = np.random.default_rng(seed).permutation(rows)
        for part in np.array_split(order, 10):
            yield np.setdiff1d(rows, part), np.sort(part)
    elif partition == "synthetic-real":
        if data.synthetic.all() or not data.synthetic.any():
            return  # nothing to train or nothing to test on
        yield rows[data.synthetic], rows[~data.synthetic]
    elif partition in ("device", "kernel", "dataset"):
        labels = getattr(data, partition)
        if len(np.unique(labels)) < 2:
            return  # leaving the only one out leaves nothing to train on
        for label in np.unique(labels):
            yield rows[labels != label], rows[labels == label]
    else:
        raise ValueError(f"partition must be one of {PARTITIONS}")


def reference_baseline(data: WgDataset) -> int:
    """The size speedups are reported over: the best size that ran in every scenario, or,
    where none did (as in Cummins' pilot data), the paper's w(4x4)."""
    always = np.flatnonzero(data.legal.all(0))
    if len(always):
        oracle_t = np.nanmin(data.runtimes, axis=1)
        return int(
            always[int(np.argmax(np.log(oracle_t[:, None] / data.runtimes[:, always]).mean(0)))]
        )
    four = data.column(4, 4)
    return four if four is not None else baseline_column(data)


def evaluate(
    data: WgDataset,
    methods: Sequence[str] = METHODS,
    partitions: Sequence[str] = PARTITIONS,
    seed: int = 0,
    progress: Callable[[EvalProgress], None] | None = None,
) -> list[EvalResult]:
    """Every method on every partition (partitions with no folds are skipped); ``progress``
    hears of each fitted fold, and once before the first. An unknown method is refused
    (UnknownMethodError) before any is fitted."""
    # A bare string was taken apart: 'performance_knn' as the methods p, e, r, ...
    methods = as_list(methods, "methods", PerfportError)
    partitions = as_list(partitions, "partitions", PerfportError)
    for method in methods:
        check_method(method)
    baseline = reference_baseline(data)
    expert = data.column(32, 4)
    oracle = data.oracle
    plan = [(p, splits) for p in partitions if (splits := list(folds(data, p, seed)))]
    total, done = sum(len(splits) for _, splits in plan) * len(methods), 0
    if progress is not None and plan and methods:
        progress(EvalProgress(plan[0][0], methods[0], 0, total))
    results = []
    for partition, splits in plan:
        for method in methods:
            chosen, first, times = [], [], []
            tests = []
            for train, test in splits:
                predictor = make_predictor(method, seed).fit(data.subset(train))
                for s in test:
                    started = time.perf_counter()
                    w, proposals = _choose(predictor, data, s)
                    times.append((time.perf_counter() - started) * 1000.0)
                    chosen.append(w)
                    first.append(proposals[0])
                    tests.append(s)
                done += 1
                if progress is not None:
                    progress(EvalProgress(partition, method, done, total))
            results.append(_score(data, method, partition, np.array(tests), np.array(chosen), np.array(first),
                                  times, oracle, baseline, expert, seed))  # fmt: skip
    return results


def _choose(predictor: Any, data: WgDataset, s: int) -> tuple[int, list[int]]:
    """Propose until a size runs, as a launcher would; returns it and every proposal."""
    refused: set[int] = set()
    proposals = []
    for _ in range(data.runtimes.shape[1]):
        w = predictor.propose(data.features[s], int(data.max_wg[s]), refused)
        proposals.append(w)
        if np.isfinite(data.runtimes[s, w]):
            return w, proposals
        refused.add(w)
    return w, proposals


def _score(
    data: WgDataset, method: str, partition: str, tests: np.ndarray, chosen: np.ndarray, first: np.ndarray,
    times: list[float], oracle: np.ndarray, baseline: int, expert: int | None, seed: int,
) -> EvalResult:  # fmt: skip
    t = data.runtimes[tests, chosen]
    best = data.runtimes[tests, oracle[tests]]
    valid = data.valid[tests, first]
    ran_first = np.isfinite(data.runtimes[tests, first])
    expert_t = data.runtimes[tests, expert] if expert is not None else np.full(len(tests), np.nan)
    devices, kernels = data.device[tests], data.kernel[tests]
    ratio = best / t
    ran = ratio[np.isfinite(ratio)]
    return EvalResult(
        method=method,
        partition=partition,
        performance=geomean(ratio),
        performance_arithmetic=float(ran.mean()) if len(ran) else float("nan"),
        speedup_over_baseline=geomean(data.runtimes[tests, baseline] / t),
        speedup_over_expert=geomean(expert_t / t),
        accuracy=float(np.mean(chosen == oracle[tests])),
        validity=float(np.mean(valid)),
        refused=float(np.mean(valid & ~ran_first)),
        predict_ms=float(np.mean(times)),
        scenarios=len(tests),
        performance_ci95=bootstrap_geomean_ci(ratio, seed),
        over_expert=tuple(float(v) for v in (expert_t / t)[np.isfinite(expert_t / t)]),
        per_device=tuple(
            (str(d), geomean(best[devices == d] / t[devices == d]), int((devices == d).sum()))
            for d in sorted(set(devices.tolist()))
        ),
        per_kernel=tuple(
            (str(k), geomean(best[kernels == k] / t[kernels == k]), int((kernels == k).sum()))
            for k in sorted(set(kernels.tolist()))
        ),
        choices=tuple((int(s), int(c)) for s, c in zip(tests, chosen, strict=True)),
    )
