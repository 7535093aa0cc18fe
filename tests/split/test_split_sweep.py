"""``perfport split --sweep``: its end points put the whole extent on one device exactly, and
each point reports the share that ran."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.measure.data import host_arrays
from perfport.split.split import split_run
from perfport.split.sweep import two_parts


@pytest.mark.parametrize(("extent", "block"), [(1090, 64), (5, 64), (1024, 64), (1, 1)])
def test_the_ends_put_everything_on_one_device(extent, block):
    assert two_parts(extent, block, 0.0) == ((0, 0), (0, extent))
    assert two_parts(extent, block, 1.0) == ((0, extent), (extent, extent))


def test_between_the_ends_the_first_takes_whole_blocks():
    assert two_parts(1090, 64, 0.5) == ((0, 576), (576, 1090))


def test_a_sweep_reports_the_share_that_ran_and_matches_numpy():
    spec = builtin("vector_add")
    two = get_device("opencl:0:0.0"), get_device("opencl:0:0.1")
    out = split_run(spec, {"n": 1090}, two, target_s=0.0, plan_from="eq4", sweep_points=3,
                    times={two[0].id: 1.0, two[1].id: 1.0})  # fmt: skip
    points = out.to_json()["sweep"]
    assert [p["parts"] for p in points][::2] == [[[0, 0], [0, 1090]], [[0, 1090], [1090, 1090]]]
    assert [p["ran_share"] for p in points][::2] == [0.0, 1.0]
    assert points[1]["ran_share"] == pytest.approx(points[1]["parts"][0][1] / 1090)
    full = spec.problem.merged({"n": 1090})
    x = host_arrays(spec, spec.env({}, full), 0)
    for p in out.sweep:
        np.testing.assert_allclose(p.run.outputs["c"], x["a"] + x["b"], rtol=1e-6)
