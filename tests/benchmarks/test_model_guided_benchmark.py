"""benchmarks/model_guided.py: its spaces are the full ones and its count is the goal's."""

from __future__ import annotations

import numpy as np

from conftest import load_benchmark


def test_evaluations_to_95_percent_count_failures_and_never_reached():
    bench = load_benchmark("model_guided")
    times = np.array([10.0, np.nan, 5.0, 5.2])
    assert bench.evals_to_target([0, 1, 3], times) == 3  # 5.0 / 5.2 >= 0.95
    assert bench.evals_to_target([1, 2], times) == 2  # a failed configuration counts
    assert bench.evals_to_target([0, 1], times) == 3  # never within 95%: len + 1


def test_the_spaces_are_full_and_each_configuration_has_its_own_label():
    bench = load_benchmark("model_guided")
    spaces = {s.name: s for s in bench.spaces()}
    assert {k: len(s.space) for k, s in spaces.items()} == {"matmul": 36, "dg": 12, "fd": 6}
    assert all(1120 % (lsize - 2) == 0 for lsize in bench.FD_LSIZES)
    for s in spaces.values():
        labels = {s.label(dict(s.space.config(i))) for i in range(len(s.space))}
        assert len(labels) == len(s.space)
