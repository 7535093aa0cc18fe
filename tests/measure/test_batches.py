"""Launches are timed in batches, and the worker's watchdog hears from it once a batch: a batch
must fit well inside --timeout, which is meant for one launch. Batches of a second of kernel
time killed correct 0.28 s launches under --timeout 0.8."""

from perfport.measure.trial import launches_per_batch


def test_a_batch_stays_within_a_quarter_of_the_time_limit():
    assert launches_per_batch(0.28 * 1000, 0.8) == 1  # was 3: 0.84 s between signs of life
    assert launches_per_batch(10.0, 0.8) == 20  # 0.2 s
    assert launches_per_batch(10.0, 30.0) == 100  # a second, as before, under the default
    assert launches_per_batch(5000.0, 30.0) == 1  # one launch is the least
