import numpy as np
import pytest

from perfport._core import Config, Measurement, Outcome, Problem, SpecError, summarize


def test_assignment_canonical_and_hashable():
    a = Config.of({"b": np.int64(2), "a": 1})
    b = Config.of(a=1, b=2)
    assert a == b and hash(a) == hash(b) and a.key == '{"a":1,"b":2}'
    assert isinstance(a["b"], int)
    assert Config.of(a=1) != Problem.of(a=1)  # different kinds never compare equal
    with pytest.raises(SpecError):
        Config.of(a=[1, 2])


def test_stats_and_median_ci():
    times = [1.0] * 10 + [5.0]
    s = summarize(times)
    assert s.n == 11 and s.min == 1.0 and s.median == 1.0 and s.ci_low <= s.median <= s.ci_high
    rng = np.random.default_rng(0)
    # The interval covers the true median about 95% of the time (or more: it is conservative).
    covered = 0
    for _ in range(400):
        x = rng.lognormal(size=25)
        st = summarize(x)
        covered += st.ci_low <= 1.0 <= st.ci_high
    assert 0.93 <= covered / 400 <= 1.0


def test_measurement_objective_is_median():
    m = Measurement(Config.of(w=1), Outcome.OK, times_ms=(3.0, 1.0, 2.0))
    assert m.ok and m.time_ms == 2.0
    failed = Measurement(Config.of(w=1), Outcome.TIMEOUT, "hung")
    assert not failed.ok and failed.time_ms is None
