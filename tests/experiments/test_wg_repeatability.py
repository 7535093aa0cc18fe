"""experiments/2026-11-22-wg-repeatability/wg_repeatability.py: matching re-measured scenarios and the noise ceiling."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import load_experiment, tiny_wg_dataset
from perfport.wg import common_columns, match_scenarios, save_dataset

wr = load_experiment("wg_repeatability")

SIZES = np.array([[1, 1], [2, 1], [4, 1], [8, 1]])


FIRST = tiny_wg_dataset(
    SIZES,
    [[4.0, 2.0, 1.0, 3.0], [1.0, 2.0, 3.0, 4.0], [5.0, 1.0, 2.0, 2.0]],
    [("gpu", "sobel", "512"), ("gpu", "synthetic", "512"), ("gpu", "synthetic", "512")],
    [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]],
)


def test_identical_runs_reach_the_ceiling_of_one() -> None:
    (ceiling,) = wr.device_ceilings(FIRST, FIRST, "same.npz")
    assert ceiling.scenarios == 3 and ceiling.unmatched == 0
    assert ceiling.first_best_on_second == pytest.approx(1.0)
    assert ceiling.second_best_on_first == pytest.approx(1.0)
    assert ceiling.first_best_on_second_min == pytest.approx(1.0)
    assert ceiling.correlation_median == pytest.approx(1.0)
    assert ceiling.time_ratio_median == pytest.approx(1.0)


def test_swapped_best_size_gives_the_known_fraction() -> None:
    a = np.array([4.0, 2.0, 1.0, 3.0])
    b = np.array([4.0, 1.0, 2.0, 3.0])  # the best and the second best swapped
    n, _, one, two, ratio = wr.compare_runs(a, b)
    assert n == 4
    assert one == pytest.approx(0.5)  # run 1's best (w 4x1) takes 2.0 in run 2, whose best is 1.0
    assert two == pytest.approx(0.5)
    assert ratio == pytest.approx(1.0)  # median of (1, 0.5, 2, 1)


def test_sizes_that_did_not_run_in_one_run_are_left_out() -> None:
    a = np.array([4.0, np.nan, 1.0, 3.0])
    b = np.array([4.0, 0.5, 2.0, 3.0])  # 0.5 ran only in run 2: not a best for either
    n, _, one, two, _ = wr.compare_runs(a, b)
    assert (n, one, two) == (3, 1.0, 1.0)
    assert wr.compare_runs(np.array([np.nan, 1.0]), np.array([1.0, np.nan]))[0] == 0


def test_matching_by_name_then_features_and_sizes_by_pairs() -> None:
    # The second run lists sizes in another order and lacks w(1x1); its scenarios come in
    # another order; the two synthetic ones share a name and differ only in features; one
    # scenario was never measured in the first run.
    second = tiny_wg_dataset(
        np.array([[8, 1], [4, 1], [2, 1]]),
        [[2.0, 2.0, 1.0], [3.0, 1.0, 2.0], [2.0, 3.0, 4.0], [1.0, 1.0, 1.0]],
        [("gpu", "synthetic", "512"), ("gpu", "sobel", "512"), ("gpu", "synthetic", "512"),
         ("gpu", "heat", "512")],
        [[2.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 0.0]],
    )  # fmt: skip
    first_cols, second_cols = common_columns(FIRST.sizes, second.sizes)
    assert first_cols.tolist() == [3, 2, 1] and second_cols.tolist() == [0, 1, 2]
    pairs, unmatched = match_scenarios(FIRST, second)
    assert sorted(pairs) == [(0, 1), (1, 2), (2, 0)] and unmatched == [3]
    rows, _ = wr.scenario_repeats(FIRST, second)
    by_first = {r.first: r for r in rows}
    assert by_first[0].first_best_on_second == pytest.approx(1.0)  # sobel: same order of sizes
    assert by_first[2].first_best_on_second == pytest.approx(1.0)  # w(2x1) best in both
    # synthetic #1: run 1's best of the shared sizes is w(2x1) (2.0), which takes 4.0 in run 2
    # where w(8x1) takes 2.0; run 2's best, w(8x1), takes 4.0 in run 1, whose best is 2.0
    assert by_first[1].first_best_on_second == pytest.approx(0.5)
    assert by_first[1].second_best_on_first == pytest.approx(0.5)
    (ceiling,) = wr.device_ceilings(FIRST, second, "again.npz")
    assert ceiling.scenarios == 3 and ceiling.unmatched == 1
    assert ceiling.first_best_on_second == pytest.approx(0.5 ** (1 / 3))
    assert ceiling.first_best_on_second_min == pytest.approx(0.5)


def test_an_ambiguous_scenario_is_not_matched() -> None:
    twins = tiny_wg_dataset(
        SIZES, [[1.0, 2.0, 3.0, 4.0]] * 2, [("gpu", "synthetic", "512")] * 2, [[1.0, 0.0]] * 2
    )
    pairs, unmatched = match_scenarios(twins, twins)
    assert pairs == [] and unmatched == [0, 1]
    stranger = tiny_wg_dataset(
        SIZES, [[1.0, 2.0, 3.0, 4.0]], [("gpu", "synthetic", "512")], [[9.0, 0.0]]
    )
    assert match_scenarios(FIRST, stranger) == ([], [0])  # two names match, no features do


def test_method_at_the_first_oracle_scores_one_and_the_ceiling_on_the_second_run() -> None:
    second = tiny_wg_dataset(
        SIZES,
        [[4.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]],
        [("gpu", "sobel", "512"), ("gpu", "synthetic", "512")],
        [[0.0, 0.0], [1.0, 0.0]],
    )
    chosen = FIRST.oracle
    (m,) = wr.method_on_devices(FIRST, chosen, [("again.npz", second)], "oracle", "kernel")
    assert (m.scenarios, m.matched, m.repeat) == (3, 2, "again.npz")
    assert m.performance == pytest.approx(1.0) and m.performance_matched == pytest.approx(1.0)
    assert m.performance_second_run == pytest.approx(math.sqrt(0.5))
    # Against both runs' geometric-mean times, sobel's sizes 4x1 and 2x1 tie at sqrt(2).
    assert m.performance_both_runs == pytest.approx(1.0)
    worst = chosen.copy()
    worst[0] = 3  # sobel at 8x1: 3.0 in both runs, against sqrt(2)
    (poor,) = wr.method_on_devices(FIRST, worst, [("again.npz", second)], "worst", "kernel")
    assert poor.performance_both_runs == pytest.approx(math.sqrt(math.sqrt(2) / 3))
    rows = wr.method_on_devices(FIRST, chosen, [("a.npz", second), ("b.npz", FIRST)], "o", "kernel")
    assert [(r.repeat, r.matched) for r in rows] == [("a.npz", 2), ("b.npz", 3)]  # one row each
    (c,) = wr.device_ceilings(FIRST, second, "again.npz")
    assert m.performance_second_run == pytest.approx(c.first_best_on_second)


def test_command_line_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save_dataset(FIRST, tmp_path / "first.npz")
    save_dataset(FIRST, tmp_path / "again.npz")
    argv = ["--data", str(tmp_path / "first.npz"), "--repeat", str(tmp_path / "again.npz")]
    assert wr.main([*argv, "--no-method", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (ceiling,) = out["ceilings"]
    assert ceiling["repeat"] == "again.npz" and ceiling["first_best_on_second"] == 1.0
    assert out["method"] == []
