"""A split is verified as ``perfport tune`` verifies a configuration (one ``Comparison``): an
output declared ``ignore=True`` is not compared, an output's atol/rtol bound it, a spec's
verify function judges, and without a tolerance the least precise float among all the arrays
sets it. Split compared every output exactly (integers) or at its own type's tolerance."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg, SplitArray, SplitDim
from perfport.devices import get_device
from perfport.split.split import split_run

# q = x + (the work-group's parity): its last unit depends on the work-groups, so the split's
# differs from one device's; grp records the work-group, which differs too.
SOURCE = """
__kernel void approx(__global const int* x, __global int* q, __global int* grp, int n) {
    const int i = get_global_id(0);
    if (i < n) { q[i] = x[i] + (get_group_id(0) & 1); grp[i] = get_group_id(0); }
}
"""
APPROX = KernelSpec(
    name="approx",
    source=SOURCE,
    entry="approx",
    params=(Param("wg", (16, 32, 64), ParamKind.LAUNCH),),
    global_size=("round_up(n, wg)",),
    local_size=("wg",),
    args=(
        ArrayArg("x", "int", ("n",)),
        ArrayArg("q", "int", ("n",), output=True, atol=1),
        ArrayArg("grp", "int", ("n",), output=True, ignore=True),
        ScalarArg("n", "int", "n"),
    ),
    problem={"n": 4096},
    default={"wg": 64},
    split=(SplitDim(0, "n", (SplitArray("x"), SplitArray("q"), SplitArray("grp"))),),
)


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _split(spec, two):
    # 1/3 of 4096 is no multiple of 64: the second part's work-groups start at an odd one
    out = split_run(spec, {}, two, target_s=0.0, plan_from="eq4", sweep_points=3,
                    times={two[0].id: 2.0, two[1].id: 1.0})  # fmt: skip
    alone = out.single[1].outputs
    assert (out.run.outputs["grp"] != alone["grp"]).any()  # really differ
    assert (out.run.outputs["q"] != alone["q"]).any()
    return out


def test_ignored_outputs_and_atol_verify_a_split_as_they_verify_tune(two):
    out = _split(APPROX, two)
    assert out.verified, out.mismatch
    assert all(p.verified for p in out.sweep)


def test_a_verify_function_judges_a_split(two):
    def within_one(expected, actual):
        return bool(np.all(np.abs(actual["q"] - expected["q"]) <= 1))

    args = tuple(dataclasses.replace(a, atol=None) if a.name == "q" else a for a in APPROX.args)
    spec = dataclasses.replace(APPROX, args=args, verify=within_one)
    assert _split(spec, two).verified
    spec = dataclasses.replace(spec, verify=lambda expected, actual: False)
    out = _split(spec, two)
    assert not out.verified and out.mismatch == "the verify function returned False"


def test_the_default_tolerance_is_the_least_precise_float_among_the_arrays():
    from perfport.measure.verify import Comparison

    source = "__kernel void widen(__global const float* x, __global double* y) {}"
    spec = KernelSpec(
        name="widen", source=source, entry="widen",
        params=(Param("wg", (16,), ParamKind.LAUNCH),), global_size=("n",), local_size=("wg",),
        args=(ArrayArg("x", "float", ("n",)), ArrayArg("y", "double", ("n",), output=True)),
        problem={"n": 64},
    )  # fmt: skip
    comparison = Comparison.of(spec, spec.problem)
    assert comparison.tolerance == pytest.approx(1e-3)  # float's, not double's 1e-9
    want = {"y": np.ones(64)}
    assert comparison.mismatch({"y": np.ones(64) + 1e-5}, want) is None


def test_a_split_whose_every_output_is_ignored_is_not_verified(two):
    """Nothing compared (every output ignored, no verify function): tune calls such results
    "not verified"; split's JSON says so (``verified`` false, ``verification`` unverified),
    for the run, its sweep points and rebalanced launches, yet it may still be chosen."""
    args = tuple(dataclasses.replace(a, ignore=True) if a.name == "q" else a for a in APPROX.args)
    spec = dataclasses.replace(APPROX, args=args)
    out = split_run(spec, {}, two, target_s=0.0, plan_from="eq4", sweep_points=2, iterations=1,
                    times={two[0].id: 2.0, two[1].id: 1.0})  # fmt: skip
    data = out.to_json()
    assert data["verified"] is False and data["verification"] == "unverified"
    assert data["mismatch"] is None
    for row in data["sweep"] + data["iterations"]:
        assert row["verified"] is False and row["verification"] == "unverified"
    assert out.chosen is not None  # not wrong: the split stays in the running
    compared = _split(APPROX, two).to_json()  # an output compared: verified, as before
    assert compared["verified"] is True and compared["verification"] == "verified"


def test_a_spec_with_a_numpy_reference_verifies_the_split_against_it(two):
    """A kernel wrong on every device gave a split equal to the single device's output, and
    that verified it. With a numpy reference, the split is compared with the reference."""
    source = """
    __kernel void off(__global const int* x, __global int* y, int n) {
        const int i = get_global_id(0);
        if (i < n) y[i] = x[i] + 1;
    }"""
    spec = KernelSpec(
        name="off", source=source, entry="off",
        params=(Param("wg", (16, 32), ParamKind.LAUNCH),),
        global_size=("round_up(n, wg)",), local_size=("wg",),
        args=(ArrayArg("x", "int", ("n",)), ArrayArg("y", "int", ("n",), output=True),
              ScalarArg("n", "int", "n")),
        problem={"n": 1024}, default={"wg": 32},
        split=(SplitDim(0, "n", (SplitArray("x"), SplitArray("y"))),),
    )  # fmt: skip
    times = {two[0].id: 1.0, two[1].id: 1.0}
    plain = split_run(spec, {}, two, target_s=0.0, plan_from="eq4", times=times)
    assert plain.verified and plain.to_json()["verified_against"] == "best single device"
    spec = dataclasses.replace(spec, reference=lambda p, i: {"y": i["x"] * 1})
    out = split_run(spec, {}, two, target_s=0.0, plan_from="eq4", times=times)
    data = out.to_json()
    assert data["verified"] is False and data["verified_against"] == "numpy reference"
    assert "y" in data["mismatch"]
    right = dataclasses.replace(spec, reference=lambda p, i: {"y": i["x"] + 1})
    assert split_run(right, {}, two, target_s=0.0, plan_from="eq4", times=times).verified
