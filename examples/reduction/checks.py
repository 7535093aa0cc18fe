"""Verify functions for reduce.toml (docs/kernel-spec.md, tests/measure/test_verify_power.py) (named from the TOML spec as 'checks.py:...')."""

import numpy as np


def same_sum(expected, actual):
    """The partial sums differ with the work-group size; their sum must not."""
    return int(np.sum(expected["partial"])) == int(np.sum(actual["partial"]))


def broken(expected, actual):
    raise ValueError("this verify function is broken\non purpose")
