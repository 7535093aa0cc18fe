"""Metrics and objectives: safe expressions of the problem, parameters and time."""

from __future__ import annotations

import math

import pytest

from perfport._core import ArrayArg, KernelSpec, Param, SpecError
from perfport._core.metrics import (
    Ceilings,
    Direction,
    Objective,
    ResultMetrics,
    roofline_fraction,
)

SOURCE = "__kernel void k(__global float* a) { a[get_global_id(0)] = 0; }"


def spec(**fields: object) -> KernelSpec:
    base: dict[str, object] = dict(
        name="k", source=SOURCE, entry="k", global_size="n", local_size="wg",
        params=(Param("wg", (32, 64)),), problem={"n": 1024}, derived={"groups": "n // wg"},
        args=(ArrayArg("a", "float", ("n",), output=True),),
    )  # fmt: skip
    return KernelSpec(**(base | fields))  # type: ignore[arg-type]


def test_metrics_are_expressions_of_problem_parameters_work_and_time() -> None:
    s = spec(
        bytes="8 * n", flops="2 * n", metrics={"per_group": "GBps / groups", "us": "time_ms * 1000"}
    )
    values = s.metric_set.values(s.env({"wg": 32}, s.problem), 0.5)
    assert values["GBps"] == pytest.approx(8 * 1024 / 0.5e6)
    assert values["GFLOPs"] == pytest.approx(2 * 1024 / 0.5e6)
    assert values["per_group"] == pytest.approx(values["GBps"] / 32)  # n // wg groups
    assert values["us"] == pytest.approx(500.0)
    assert s.metric_set.values(s.env({"wg": 32}, s.problem), None) == dict.fromkeys(values)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"metrics": {"x": "time_ms * nope"}},
            "metric x 'time_ms * nope' uses unknown name(s) nope",
        ),
        ({"metrics": {"x": "__import__('os')"}}, "metric x"),
        ({"metrics": {"GBps": "1"}}, "metric name 'GBps'"),
        ({"bytes": "n * size"}, "bytes 'n * size' uses unknown name(s) size"),
        ({"metrics": {"x": "GBps"}}, "uses unknown name(s) GBps"),  # no bytes declared
        ({"metrics": {"x": "y", "y": "1"}}, "metric x 'y' uses unknown"),  # only earlier ones
    ],
)
def test_bad_metrics_are_one_line_errors_at_load(fields: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError) as err:
        spec(**fields)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_objective_parses_direction_and_scores_lower_is_better() -> None:
    assert Objective.parse("time") == Objective()
    assert Objective.parse("GFLOPs") == Objective("GFLOPs", Direction.MAX)
    assert Objective.parse("us:min").direction is Direction.MIN
    faster, slower = Objective.parse("GBps").score(200.0), Objective.parse("GBps").score(100.0)
    assert faster is not None and slower is not None and faster < slower
    assert Objective.parse("GBps").score(0.0) is None  # strategies take logs of scores
    with pytest.raises(SpecError, match="optionally with :max or :min"):
        Objective.parse("GBps:up")
    with pytest.raises(SpecError, match="would find the slowest configuration"):
        Objective.parse("time:max")


def test_described_spec_gives_the_same_metrics_and_a_roofline_fraction() -> None:
    s = spec(bytes="8 * n", flops="n * wg")
    ceilings = Ceilings(
        "f", copy_GBps=0.1, read_GBps=1, write_GBps=1, fp32_GFLOPs=1.0, fp64_GFLOPs=None
    )
    stored = ResultMetrics.of(s.describe(), {"n": 2048}, ceilings)
    values = stored.values({"wg": 64}, 1.0)
    assert values["GBps"] == pytest.approx(8 * 2048 / 1e6)
    # memory: 0.016384 / 0.1; compute: 0.131072 / 1.0: the larger is the fraction
    assert values["roofline"] == pytest.approx(max(0.16384, 0.131072))
    assert ResultMetrics.of(s.describe(), {}, None).values({"wg": 64}, 1.0)["roofline"] is None
    assert "metrics" not in spec().describe() and "bytes" not in spec().describe()


def test_work_or_derived_values_that_fail_leave_out_only_what_uses_them() -> None:
    """Without n (another device's results, whose problem lacks it), bytes and the derived
    groups cannot be computed, and every metric was None, a metric of the configuration and
    time alone too: the prior by such a metric fell back to time. Only their users are now."""
    s = spec(
        bytes="8 * n",
        metrics={"per_wg": "wg / time_ms", "per_group": "GBps / groups", "g": "groups * 1.0"},
    )
    values = ResultMetrics.of({**s.describe(), "problem": {}}, {}).values({"wg": 64}, 2.0)
    assert values == {"GBps": None, "per_wg": 32.0, "per_group": None, "g": None,
                      "roofline": None, "roofline_same_bytes": None}  # fmt: skip
    complete = ResultMetrics.of(s.describe(), {}).values({"wg": 64}, 2.0)
    assert complete["g"] == 16.0 and complete["per_group"] == pytest.approx(8 * 1024 / 2e6 / 16)


def test_roofline_fraction_is_the_bound_side() -> None:
    assert roofline_fraction(50.0, 1.0, 100.0, 1000.0) == 0.5
    assert roofline_fraction(None, 900.0, 100.0, 1000.0) == 0.9
    assert roofline_fraction(None, None, 100.0, 1000.0) is None
    assert math.isclose(roofline_fraction(10.0, None, 100.0, None) or 0, 0.1)


def test_copy_at_interpolates_the_curve_log_log_and_is_flat_beyond_it() -> None:
    curve = ((1e6, 100.0), (16e6, 400.0), (256e6, 800.0))
    c = Ceilings("f", 800.0, 1, 1, 1.0, None, copy_curve=curve)
    assert c.copy_at(4e6) == pytest.approx(200.0)  # a quarter of the way in logs: 100 x 4^0.5
    assert c.copy_at(64e6) == pytest.approx(800.0 / 2**0.5)
    assert (
        c.copy_at(1e3) == 100.0
        and c.copy_at(1e12) == 800.0
        and c.copy_at(16e6) == pytest.approx(400.0)
    )
    assert Ceilings("f", 800.0, 1, 1, 1.0, None).copy_at(4e6) is None  # stored before curves
    assert c.fraction_same_bytes({"GBps": 100.0}, 4e6, "fp32") == pytest.approx(0.5)
    assert c.fraction({"GBps": 100.0}, "fp32") == pytest.approx(0.125)
    assert c.fraction_same_bytes({"GBps": 100.0}, None, "fp32") is None
    assert c.to_json()["copy_GBps_by_bytes"] == [[1e6, 100.0], [16e6, 400.0], [256e6, 800.0]]
