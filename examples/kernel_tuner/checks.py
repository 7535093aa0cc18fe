"""The reduction's reference and verify function (named from reduction.toml as 'checks.py:...')."""

import numpy as np


def total(problem, inputs):
    """The expected output: the whole sum in element 0 (what the partial sums must add up to)."""
    expected = np.zeros(1024, np.float32)
    expected[0] = np.sum(inputs["x"], dtype=np.float64)
    return {"sum_global": expected}


def partial_sums_total(expected, actual):
    """The partial sums, added up, equal the sum of x (float32 partials: a relative 1e-4)."""
    want = float(expected["sum_global"][0])
    got = float(np.sum(actual["sum_global"], dtype=np.float64))
    return bool(np.isclose(got, want, rtol=1e-4, atol=0.0))
