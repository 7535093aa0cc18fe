import numpy as np
import pytest

from perfport._core import (
    Config,
    Measurement,
    Outcome,
    Problem,
    SpecError,
    distinct_values,
    summarize,
)
from perfport._core.stats import bootstrap_geomean_ci


def test_assignment_canonical_and_hashable():
    a = Config.of({"b": np.int64(2), "a": 1})
    b = Config.of(a=1, b=2)
    assert a == b and hash(a) == hash(b) and a.key == '{"a":1,"b":2}'
    assert isinstance(a["b"], int)
    assert Config.of(a=1) != Problem.of(a=1)  # different kinds never compare equal
    with pytest.raises(SpecError):
        Config.of(a=[1, 2])


def test_a_mapping_given_positionally_is_taken_as_one():
    """Config({"wg": 64}) iterated the dict's keys as pairs and gave the configuration w=g."""
    given = Config({"wg": 64, "bx": np.int64(8)})  # type: ignore[arg-type]
    assert given == Config.of(wg=64, bx=8) and hash(given) == hash(Config.of(wg=64, bx=8))
    assert dict(given) == {"bx": 8, "wg": 64} and given.key == '{"bx":8,"wg":64}'
    assert Problem({"n": 4096}) == Problem.of(n=4096)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="config wg: value None"):
        Config({"wg": None})  # type: ignore[arg-type]


def test_a_boolean_is_not_the_number_it_equals():
    """Python equates True with 1, so a parameter taking both (Kernel Tuner's own test cache
    declares ['test', 1, True, 2.45]) had its two configurations merged in every set and dict
    of configurations; they are two, as their keys are. 16 and 16.0 stay one."""
    assert Config.of(p=True, q=1) != Config.of(p=1, q=1)
    assert Config.of(p=False) != Config.of(p=0)
    assert len({Config.of(p=1), Config.of(p=True), Config.of(p=1.0)}) == 2
    assert Config.of(p=16) == Config.of(p=16.0) and Config.of(p=True) == Config.of(p=True)
    assert distinct_values([1, True, 1.0, 0, False, "1", True]) == [1, True, 0, False, "1"]


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


def test_bootstrap_interval_of_a_geometric_mean():
    rng = np.random.default_rng(1)
    ratios = np.exp(-rng.exponential(0.1, size=400))
    low, high = bootstrap_geomean_ci(ratios, seed=3)
    centre = np.exp(np.log(ratios).mean())
    assert low < centre < high
    # The geometric mean's spread over resampled scenarios: about 1.96 standard errors of the
    # mean log each way.
    half = 1.96 * np.log(ratios).std() / np.sqrt(len(ratios))
    assert np.log(high / low) / 2 == pytest.approx(half, rel=0.15)
    assert bootstrap_geomean_ci(ratios, seed=3) == (low, high)  # seeded
    # Four times the scenarios halve it; a run where nothing ran or one scenario gives none.
    wide = np.log(high / low)
    more = bootstrap_geomean_ci(np.tile(ratios, 4), seed=3)
    assert np.log(more[1] / more[0]) == pytest.approx(wide / 2, rel=0.15)
    assert bootstrap_geomean_ci(np.full(50, 0.9)) == pytest.approx((0.9, 0.9))
    assert all(np.isnan(bootstrap_geomean_ci(np.array([0.5, np.nan]))))


def test_measurement_objective_is_median():
    m = Measurement(Config.of(w=1), Outcome.OK, times_ms=(3.0, 1.0, 2.0))
    assert m.ok and m.time_ms == 2.0
    failed = Measurement(Config.of(w=1), Outcome.TIMEOUT, "hung")
    assert not failed.ok and failed.time_ms is None


def test_merged_over_defaults_is_the_given_assignment_or_a_fresh_one() -> None:
    defaults = Problem.of(width=8, height=4)
    resolved = Problem.of(width=16, height=4, dtype="float")
    # Every default overridden: the resolved problem itself, equal to the slow path's answer.
    assert defaults.merged(resolved) is resolved
    assert defaults.merged(resolved) == Problem.of({**dict(defaults), **dict(resolved)})
    # A partial override, a plain dict or another kind of assignment: a new, merged one.
    assert defaults.merged(Problem.of(width=2)) == Problem.of(width=2, height=4)
    assert defaults.merged({"height": 1}) == Problem.of(width=8, height=1)
    merged = defaults.merged(Config.of(width=3, height=5))
    assert type(merged) is Problem and merged == Problem.of(width=3, height=5)
    assert resolved["dtype"] == "float" and dict(resolved) == {
        "dtype": "float",
        "height": 4,
        "width": 16,
    }


def test_cpu_properties_travel_in_json_but_leave_the_fingerprint_alone(cpu):
    """What carries between CPUs (SIMD lanes, cache) is recorded where the driver reports it;
    a device stored before it was recorded keeps its identity."""
    import dataclasses

    from perfport._core import DeviceInfo, DeviceType

    again = DeviceInfo.from_json(cpu.to_json())
    assert again == cpu
    bare = dataclasses.replace(cpu, vector_width=None, cache_bytes=None, cache_line_bytes=None)
    assert bare.fingerprint == cpu.fingerprint
    old = {k: v for k, v in cpu.to_json().items()
           if k not in ("vector_width", "cache_bytes", "cache_line_bytes")}  # fmt: skip
    assert DeviceInfo.from_json(old).vector_width is None
    if cpu.type is DeviceType.CPU:  # PoCL reports all three
        assert cpu.vector_width and cpu.vector_width >= 4
        assert cpu.cache_bytes and cpu.cache_line_bytes


def test_small_samples_are_summarised_without_numpy_and_agree_with_it(monkeypatch):
    """An imported cache summarises each of up to ~300,000 entries of 10-32 runs: numpy's
    per-call cost made that most of the import. The plain path must agree with numpy's."""
    import perfport._core.stats as stats

    rng = np.random.default_rng(2)
    samples = [list(rng.lognormal(size=n)) for n in (1, 2, 3, 10, 32, 64)]
    with monkeypatch.context() as m:
        m.setattr(stats, "_SMALL", 0)  # numpy for every size
        by_numpy = [summarize(x) for x in samples]

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("numpy used for a small sample")

    with monkeypatch.context() as m:
        m.setattr(stats.np, "sort", refuse)
        plain = [summarize(x) for x in samples]
    for p, q in zip(plain, by_numpy, strict=True):
        assert (p.n, p.min, p.median, p.ci_low, p.ci_high) == (
            q.n, q.min, q.median, q.ci_low, q.ci_high
        )  # fmt: skip
        assert p.mean == pytest.approx(q.mean, rel=1e-12)
        assert p.std == pytest.approx(q.std, rel=1e-9, abs=1e-15)
    assert summarize([1.0, float("nan"), 2.0]).n == 3  # NaN: numpy's order, as before
