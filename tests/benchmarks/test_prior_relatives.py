"""benchmarks/prior_relatives.py takes the median to 95% as benchmarks/strategies.py does."""

from __future__ import annotations

import sys

import numpy as np

from conftest import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))
from prior_relatives import median_to_95


def test_a_median_between_a_reached_and_an_unreached_run_is_unreached():
    # 201 stands for "not within 200": averaging it with 97 would claim 149.
    assert median_to_95(np.array([97, 201]), top=200) == 201
    assert median_to_95(np.array([3, 97, 201, 201]), top=200) == 201


def test_a_median_of_reached_runs_is_the_usual_one():
    assert median_to_95(np.array([3, 97, 150, 201, 201]), top=200) == 150
    assert median_to_95(np.array([96, 97]), top=200) == 96.5


def test_resampled_medians_follow_the_same_rule():
    hits = np.array([[97, 201], [96, 98]])
    assert median_to_95(hits, top=200, axis=1).tolist() == [201, 97]
