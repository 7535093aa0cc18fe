"""Evaluation of kernel-subset selection as in Lawson, section 4.3 and 5: choose k
configurations on the training problems, train a selector among them, and score held-out
problems by the geometric mean of t_optimal / t_of_the_selected_configuration.

``max_achievable`` scores an oracle restricted to the chosen set (the paper's Figures 5-6 and
the limits quoted under Tables 1-2); ``performance`` scores the selector, and
``performance_ci95`` is a 95% bootstrap interval of it over the test problems, taken as
independent draws. A configuration that fails on a test problem counts as ``GEOMEAN_FLOOR``
(1000x slower) there.

``classifier_table`` and ``pruning_table`` arrange results like the paper's Tables 1-2 and
Figures 5-6; ``perfport.select.plots`` draws the figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perfport._core.containers import as_list
from perfport._core.optional import require
from perfport._core.stats import bootstrap_geomean_ci, floored_geomean
from perfport.select.classify import Classifier, Selector, best_in_set
from perfport.select.errors import SelectError, member
from perfport.select.normalise import Normalisation, normalise, relative
from perfport.select.prune import GEOMEAN_FLOOR, Pruning, choose
from perfport.select.table import PerfTable

DEFAULT_KS = (4, 6, 8, 15)
ORACLE = "oracle"  # the classifier name of rows evaluated with no classifier: the set's limit


@dataclass(frozen=True)
class SelectResult:
    """One (normalisation, pruning, classifier, k) on the held-out problems; fractions of the
    optimum in [0, 1]."""

    normalisation: str
    pruning: str
    classifier: str
    k: int
    performance: float
    max_achievable: float
    performance_ci95: tuple[float, float] = (float("nan"), float("nan"))
    # The lowest fraction over the test problems (a failure counts as GEOMEAN_FLOOR): what
    # the geometric mean hides, drawn by the report's curves.
    worst: float = float("nan")

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"performance_ci95": list(self.performance_ci95)}


def to_json(results: Iterable[SelectResult]) -> dict[str, Any]:
    """``{"results": [{normalisation, pruning, classifier, k, performance, max_achievable,
    performance_ci95, worst}]}``, the output of ``perfport select evaluate --json``."""
    return {"results": [r.to_json() for r in results]}


def split_problems(
    table: PerfTable,
    test_fraction: float = 0.2,
    seed: int = 0,
    group_by: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows): a seeded random split of the problems where anything ran
    (a problem with no result has no optimum to score against).

    With ``group_by`` (problem names, e.g. M, N, K, batch) problems that agree on those values
    fall on the same side, and ``test_fraction`` counts groups: the transposed variants of one
    GEMM size are then never split between training and test, so a selector is not scored
    on a size it has seen."""
    if not 0 < test_fraction < 1:
        raise SelectError(f"the test fraction must be between 0 and 1, got {test_fraction}")
    usable = np.flatnonzero(np.isfinite(table.times).any(axis=1))
    if len(usable) < 2:
        raise SelectError(
            f"{len(usable)} problem(s) have results; evaluation needs at least 2 to split"
        )
    if group_by:
        unknown = [g for g in group_by if g not in table.problem_names]
        if unknown:
            raise SelectError(
                f"cannot group by {', '.join(unknown)}: the problems have "
                f"{', '.join(table.problem_names)}"
            )
        columns = [table.problem_names.index(g) for g in group_by]
        _, group = np.unique(table.problems[usable][:, columns], axis=0, return_inverse=True)
        group = group.ravel()
        n_groups = int(group.max()) + 1
        if n_groups < 2:
            raise SelectError(f"the problems form one group by {', '.join(group_by)}; no split")
        order = np.random.default_rng(seed).permutation(n_groups)
        n_test = min(max(1, round(test_fraction * n_groups)), n_groups - 1)
        held = np.isin(group, order[:n_test])
        return np.sort(usable[~held]), np.sort(usable[held])
    order = np.random.default_rng(seed).permutation(usable)
    n_test = min(max(1, round(test_fraction * len(usable))), len(usable) - 1)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def geomean_fraction(fractions: np.ndarray) -> float:
    """Geometric mean of fractions of the optimum, failures (0) floored at GEOMEAN_FLOOR."""
    return float(floored_geomean(fractions, GEOMEAN_FLOOR))


def evaluate(
    table: PerfTable,
    normalisations: Sequence[Normalisation | str] = tuple(Normalisation),
    prunings: Sequence[Pruning | str] = tuple(Pruning),
    classifiers: Sequence[Classifier | str] = tuple(Classifier),
    ks: Sequence[int] = DEFAULT_KS,
    test_fraction: float = 0.2,
    seed: int = 0,
    group_by: Sequence[str] | None = None,
) -> list[SelectResult]:
    """Every combination, in the order given. With no ``classifiers``, one row per set with
    classifier ``oracle`` and performance = max_achievable (the pruning-only figures).
    ``group_by`` keeps problems that share those values on one side of the split
    (``split_problems``)."""
    # A bare string was taken apart: 'relative' as the normalisations r, e, l, ...
    norms = [member(Normalisation, n, "normalisation")
             for n in as_list(normalisations, "normalisations", SelectError)]  # fmt: skip
    methods = [member(Pruning, p, "pruning") for p in as_list(prunings, "prunings", SelectError)]
    models = [member(Classifier, c, "classifier")
              for c in as_list(classifiers, "classifiers", SelectError)]  # fmt: skip
    ks = as_list(ks, "ks", SelectError)
    if group_by is not None:
        group_by = as_list(group_by, "group_by", SelectError)
    if not norms or not methods or not ks:
        raise SelectError("evaluate needs at least one normalisation, pruning method and k")
    if not 1 <= min(ks) <= max(ks) <= table.n_configs:
        raise SelectError(
            f"set sizes {', '.join(map(str, ks))}: each must be 1 to {table.n_configs}, the "
            "table's configurations"
        )
    train, test = split_problems(table, test_fraction, seed, group_by)
    x_train, x_test = table.problems[train], table.problems[test]
    test_perf = relative(table.times[test])  # t_optimal / t per test problem and configuration
    train_times = table.times[train]
    train_perf = relative(train_times)  # which configurations ran, and ties, for choose
    scored: dict[tuple[tuple[int, ...], Classifier], tuple[float, tuple[float, float], float]] = {}
    out = []
    # One thread per library call: on a few hundred rows, BLAS and OpenMP thread pools cost
    # more to start than they save, and fight any other process for the cores.
    threadpoolctl = require("threadpoolctl", "models", "Kernel-subset evaluation")
    with threadpoolctl.threadpool_limits(1):
        for norm in norms:
            train_norm = normalise(train_times, norm)
            for method in methods:
                for k in ks:
                    order = choose(train_norm, k, method, seed, x_train, perf=train_perf)
                    chosen = tuple(sorted(order.tolist()))
                    reach = np.maximum(test_perf[:, list(chosen)].max(axis=1), GEOMEAN_FLOOR)
                    limit = geomean_fraction(reach)
                    if not models:
                        interval = bootstrap_geomean_ci(reach, seed)
                        out.append(SelectResult(norm.value, method.value, ORACLE, k, limit,
                                                limit, interval, float(reach.min())))  # fmt: skip
                    for model in models:
                        key = (chosen, model)
                        if key not in scored:
                            # The same set chosen twice (Top-N ignores the normalisation)
                            # trains the same selector: score it once.
                            labels = best_in_set(train_times, chosen)
                            selector = Selector(model, seed).fit(
                                x_train, labels, table.problem_names,
                                times=train_times[:, list(chosen)],
                            )  # fmt: skip
                            picks = np.asarray(chosen)[selector.predict(x_test)]
                            got = np.maximum(test_perf[np.arange(len(test)), picks], GEOMEAN_FLOOR)
                            scored[key] = (geomean_fraction(got), bootstrap_geomean_ci(got, seed),
                                           float(got.min()))  # fmt: skip
                        performance, interval, worst = scored[key]
                        out.append(SelectResult(norm.value, method.value, model.value, k,
                                                performance, limit, interval, worst))  # fmt: skip
    return out


# ---- the paper's tables and figures --------------------------------------------------------


@dataclass(frozen=True)
class ResultTable:
    """Labelled rows of fractions under one column per k."""

    title: str
    label: str  # what the rows are: "classifier" or "pruning"
    ks: tuple[int, ...]
    rows: tuple[tuple[str, tuple[float, ...]], ...]  # NaN where a k was not evaluated

    def to_markdown(self) -> str:
        """A markdown table in percent, two decimals, as the paper prints them."""
        lines = [
            f"{self.title}\n",
            "| " + " | ".join([self.label, *map(str, self.ks)]) + " |",
            "|---" * (len(self.ks) + 1) + "|",
        ]
        for name, values in self.rows:
            cells = ["" if np.isnan(v) else f"{100 * v:.2f}" for v in values]
            lines.append("| " + " | ".join([name, *cells]) + " |")
        return "\n".join(lines) + "\n"


def classifier_table(
    results: Sequence[SelectResult],
    normalisation: Normalisation | str = Normalisation.RELATIVE,
    pruning: Pruning | str = Pruning.PCA_KMEANS,
) -> ResultTable:
    """The paper's Tables 1-2: each classifier's performance per k for one pruning method
    (PCA + k-means in the paper), and a last row ``max achievable`` for the chosen sets."""
    norm = member(Normalisation, normalisation, "normalisation").value
    method = member(Pruning, pruning, "pruning").value
    mine = [r for r in results if r.normalisation == norm and r.pruning == method]
    ks = tuple(sorted({r.k for r in mine}))
    names = list(dict.fromkeys(r.classifier for r in mine))
    cell = {(r.classifier, r.k): r.performance for r in mine}
    limit = {r.k: r.max_achievable for r in mine}
    rows = [(n, tuple(cell.get((n, k), np.nan) for k in ks)) for n in names]
    rows.append(("max achievable", tuple(limit.get(k, np.nan) for k in ks)))
    return ResultTable(
        f"Classifiers among the configurations chosen by {method} ({norm} normalisation): "
        "geometric mean fraction of the optimum on held-out problems",
        "classifier",
        ks,
        tuple(rows),
    )


def pruning_table(
    results: Sequence[SelectResult], normalisation: Normalisation | str = Normalisation.RELATIVE
) -> ResultTable:
    """The data of the paper's Figures 5-6 for one normalisation: per pruning method and k, the
    fraction of the optimum reachable within the chosen set (max_achievable)."""
    norm = Normalisation(normalisation).value
    mine = [r for r in results if r.normalisation == norm]
    ks = tuple(sorted({r.k for r in mine}))
    names = list(dict.fromkeys(r.pruning for r in mine))
    limit = {(r.pruning, r.k): r.max_achievable for r in mine}
    return ResultTable(
        f"Pruning methods ({norm} normalisation): geometric mean fraction of the optimum "
        "reachable within the chosen configurations on held-out problems",
        "pruning",
        ks,
        tuple((n, tuple(limit.get((n, k), np.nan) for k in ks)) for n in names),
    )
