"""Evaluation on held-out problems, the paper's tables, the JSON contract and the figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_selection import two_regimes

from perfport.select import (
    ORACLE,
    Classifier,
    Normalisation,
    PerfTable,
    Pruning,
    SelectError,
    classifier_table,
    evaluate,
    pruning_table,
    split_problems,
    to_json,
)
from perfport.select.plots import plot_classifiers, plot_pruning

KEYS = ["normalisation", "pruning", "classifier", "k", "performance", "max_achievable"]
ADDED = ["performance_ci95", "worst"]  # beyond the contract, after its keys


@pytest.fixture(scope="module")
def grid():
    """The whole grid on the two-regime table: every normalisation, pruning and classifier x 2."""
    return evaluate(two_regimes(60), ks=(2, 4), seed=0)


def test_a_bare_string_where_a_list_goes_is_refused_naming_it():
    """evaluate(t, "relative", ...) said "'r' is not a valid Normalisation"."""
    table = two_regimes(20)
    for args, name in [
        (("relative", ["greedy"], []), "normalisations"),
        ((["relative"], "greedy", []), "prunings"),
        ((["relative"], ["greedy"], "decision_tree_a"), "classifiers"),
    ]:
        with pytest.raises(SelectError, match=rf"^{name} must be a list, e\.g\. \['"):
            evaluate(table, *args, ks=[2])  # type: ignore[arg-type]
    with pytest.raises(SelectError, match=r"^group_by must be a list"):
        evaluate(table, ["relative"], ["greedy"], [], ks=[2], group_by="M")


def test_the_full_grid_reaches_the_optimum_on_two_regimes(grid):
    assert len(grid) == len(Normalisation) * len(Pruning) * len(Classifier) * 2
    combos = {(r.normalisation, r.pruning, r.classifier, r.k) for r in grid}
    assert len(combos) == len(grid)
    for r in grid:
        assert r.max_achievable == pytest.approx(1.0)  # every method keeps A and B
        assert r.performance == pytest.approx(1.0), r  # and every classifier tells them apart


def test_json_contract(grid):
    out = json.loads(json.dumps(to_json(grid)))
    assert list(out) == ["results"] and len(out["results"]) == len(grid)
    first = out["results"][0]
    assert list(first) == KEYS + ADDED
    assert first["normalisation"] == "relative" and first["pruning"] == "top_n"
    assert first["classifier"] == "decision_tree_a" and first["k"] == 2
    assert isinstance(first["performance"], float) and isinstance(first["k"], int)


def _hard_table() -> PerfTable:
    """Random times with a structure no selector learns perfectly."""
    rng = np.random.default_rng(7)
    n, c = 80, 30
    problems = np.column_stack([rng.integers(1, 4096, n), rng.integers(1, 4096, n)]).astype(float)
    times = np.exp(rng.normal(0, 0.4, (n, c))) * (1 + np.log2(problems[:, :1]) / 4)
    times[rng.random((n, c)) < 0.05] = np.nan
    return PerfTable(("M", "N"), problems, ("cfg",), tuple((j,) for j in range(c)), times)


def test_scores_are_fractions_and_bounded_by_the_set():
    results = evaluate(
        _hard_table(), prunings=["top_n", "kmeans"], classifiers=["decision_tree_c", "3nn"],
        ks=(2, 6), seed=1,
    )  # fmt: skip
    assert len(results) == 4 * 2 * 2 * 2
    for r in results:
        assert 0 < r.performance <= r.max_achievable + 1e-12 <= 1 + 1e-12
        low, high = r.performance_ci95  # a bootstrap over the test problems, around the figure
        assert low <= r.performance <= high and (low < high or r.performance == 1.0)
        assert 0 < r.worst <= r.performance  # the lowest fraction, never above the mean
    assert any(r.performance < 0.95 for r in results)  # the random table is not trivial
    by_k = {k: max(r.max_achievable for r in results if r.k == k) for k in (2, 6)}
    assert by_k[6] > by_k[2]


def test_oracle_rows_without_classifiers():
    results = evaluate(_hard_table(), ["relative"], ["kmeans"], classifiers=(), ks=(3,))
    assert [(r.classifier, r.k) for r in results] == [(ORACLE, 3)]
    assert results[0].performance == results[0].max_achievable
    low, high = results[0].performance_ci95
    assert low <= results[0].max_achievable <= high


def test_split_is_seeded_and_skips_problems_without_results():
    t = _hard_table()
    times = np.array(t.times)
    times[5] = np.nan
    t = PerfTable(t.problem_names, t.problems, t.param_names, t.configs, times)
    train, test = split_problems(t, 0.25, seed=4)
    assert len(test) == 20 and len(train) == 59 and 5 not in train and 5 not in test
    assert not set(train) & set(test)
    assert (split_problems(t, 0.25, seed=4)[1] == test).all()
    assert not (split_problems(t, 0.25, seed=5)[1] == test).all()
    with pytest.raises(SelectError, match="between 0 and 1"):
        split_problems(t, 1.0)
    with pytest.raises(SelectError, match="at least 2"):
        split_problems(t.subset([0]), 0.5)


def test_grouped_split_keeps_each_size_on_one_side():
    """Transposed variants of a size (same M, N, K, batch) are never split."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 500, (40, 4)).astype(float)
    problems = np.array([[*s, ta, tb] for s in sizes for ta in (0, 1) for tb in (0, 1)])
    names = ("M", "N", "K", "batch", "trans_a", "trans_b")
    times = rng.uniform(1.0, 2.0, (len(problems), 3))
    t = PerfTable(names, problems, ("x",), ((1,), (2,), (3,)), times)
    train, test = split_problems(t, 0.2, seed=1, group_by=("M", "N", "K", "batch"))
    assert len(test) == 8 * 4 and len(train) == 32 * 4
    held = {tuple(problems[i, :4]) for i in test}
    assert not held & {tuple(problems[i, :4]) for i in train}
    # A plain split of the same table separates some size from its transposes.
    plain_train, plain_test = split_problems(t, 0.2, seed=1)
    assert {tuple(problems[i, :4]) for i in plain_test} & {
        tuple(problems[i, :4]) for i in plain_train
    }
    rows = evaluate(t, ["relative"], ["kmeans"], ["decision_tree_a_derived"], [2], group_by=["M"])
    assert len(rows) == 1 and 0 < rows[0].performance <= rows[0].max_achievable <= 1
    with pytest.raises(SelectError, match="cannot group by Q"):
        split_problems(t, 0.2, group_by=["Q"])


def test_tables_arrange_results_like_the_paper(grid):
    table = classifier_table(grid, "sigmoid", "pca_kmeans")
    assert table.ks == (2, 4)
    assert [name for name, _ in table.rows] == [c.value for c in Classifier] + ["max achievable"]
    text = table.to_markdown()
    assert "| decision_tree_b | 100.00 | 100.00 |" in text and "pca_kmeans" in text
    fig = pruning_table(grid, Normalisation.RAW_CUTOFF)
    assert [name for name, _ in fig.rows] == [p.value for p in Pruning]
    assert fig.to_markdown().count("\n") == 2 + 2 + len(Pruning)


def test_figures_are_written(tmp_path, grid):
    pytest.importorskip("matplotlib")
    plot_pruning(grid, tmp_path / "fig5.png", title="two regimes")
    plot_classifiers(grid, tmp_path / "table1.png", "relative", "kmeans")
    for name in ("fig5.png", "table1.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    with pytest.raises(SelectError, match="no results"):
        plot_classifiers([], tmp_path / "none.png")
    with pytest.raises(SelectError, match="no results"):
        plot_pruning([], tmp_path / "none.png")


def test_plots_without_matplotlib_is_refused_before_the_evaluation(tmp_path, capsys, monkeypatch):
    # The whole evaluation ran (66 s) before the missing extra was named.
    import importlib
    import sys

    from perfport.cli import main

    def never(*args, **kwargs):
        raise AssertionError("evaluated before --plots was checked")

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plots extra were missing
    monkeypatch.setattr(importlib.import_module("perfport.select"), "evaluate", never)
    assert main(["select", "evaluate", "--kernels", "4", "--plots", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'perfport[plots]'" in err
