"""``perfport split --sweep``: its end points put the whole extent on one device exactly, each
point's parts are whole in both devices' work-groups, a point whose part breaks the kernel's
restriction is refused before anything runs, and each point reports the share that ran."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfport import ArrayArg, KernelSpec, Param, ParamKind, SplitArray, SplitDim
from perfport._core import Config, SpecError
from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.measure.data import host_arrays
from perfport.split.split import split_run
from perfport.split.sweep import check_sweep, two_parts


@pytest.mark.parametrize(("extent", "block"), [(1090, 64), (5, 64), (1024, 64), (1, 1)])
def test_the_ends_put_everything_on_one_device(extent, block):
    assert two_parts(extent, (block, block), 0.0) == ((0, 0), (0, extent))
    assert two_parts(extent, (block, block), 1.0) == ((0, extent), (extent, extent))


def test_between_the_ends_both_devices_take_whole_blocks():
    """Snapping the first device's part alone gave the second 2720 elements in groups of
    256; the planner's rule (floors, the leftover to whoever covers it with the least work)
    keeps both whole where the extent allows."""
    assert two_parts(4096, (32, 256), 1 / 3) == ((0, 1536), (1536, 4096))
    assert two_parts(4096, (32, 256), 2 / 3) == ((0, 2816), (2816, 4096))
    # 1090 is no multiple of 64: one device's part takes the leftover, the other's is whole
    assert two_parts(1090, (64, 64), 0.5) == ((0, 578), (578, 1090))


# y[i] = 2 x[i] with no bounds check: the restriction keeps every work-item inside
NOBOUNDS = KernelSpec(
    name="nobounds",
    source="__kernel void nb(__global const float* x, __global float* y) {\n"
    "  const int i = get_global_id(0); y[i] = 2.0f * x[i];\n}\n",
    entry="nb",
    params=(Param("wg", (32, 64, 128, 256), ParamKind.LAUNCH),),
    restrictions=("n % wg == 0",),
    global_size=("round_up(n, wg)",),
    local_size=("wg",),
    args=(ArrayArg("x", "float", ("n",)), ArrayArg("y", "float", ("n",), output=True)),
    problem={"n": 4096},
    default={"wg": 256},
    split=(SplitDim(0, "n", (SplitArray("x"), SplitArray("y"))),),
)


def test_a_sweep_keeps_a_kernel_that_relies_on_its_restriction_inside_its_parts():
    """--sweep 4 at 1/3 gave the second device 2720 elements in groups of 256: launched,
    the kernel wrote past its part's buffers and the process aborted (heap corruption)."""
    two = get_device("opencl:0:0.0"), get_device("opencl:0:0.1")
    configs = [Config.of(wg=32), Config.of(wg=256)]
    check_sweep(NOBOUNDS, NOBOUNDS.problem, two, configs, NOBOUNDS.split[0], (32, 256), 4)
    out = split_run(NOBOUNDS, {}, two, configs={two[0].id: configs[0], two[1].id: configs[1]},
                    target_s=0.0, plan_from="eq4", sweep_points=4)  # fmt: skip
    assert all(p.verified for p in out.sweep)
    for p in out.sweep:
        assert all((b - a) % wg == 0 for (a, b), wg in zip(p.parts, (32, 256), strict=True))


def test_a_sweep_point_that_breaks_the_restriction_at_its_part_is_refused_in_one_line():
    # at n = 96 * 256 the restriction lets groups of 256 run the whole extent only
    spec = dataclasses.replace(NOBOUNDS, restrictions=("n % (wg * 96) == 0",),
                               problem={"n": 96 * 256})  # fmt: skip
    two = get_device("opencl:0:0.0"), get_device("opencl:0:0.1")
    configs = [Config.of(wg=32), Config.of(wg=256)]
    with pytest.raises(SpecError) as caught:
        check_sweep(spec, spec.problem, two, configs, spec.split[0], (32, 256), 3)
    text = str(caught.value)
    assert "\n" not in text and text.startswith("--sweep 3: at share 0.5, part ")
    assert "restriction n % (wg * 96) == 0" in text


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
