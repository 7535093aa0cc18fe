"""Split-factor sweeps and adaptive rebalancing on two PoCL sub-devices: every launch is
verified; a plan made from wrong times is re-split from the measured part times."""

from __future__ import annotations

import dataclasses
import json
import types

import numpy as np
import pytest

from perfport._core import Check, Config, Problem, SpecError
from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.measure.data import reference_outputs
from perfport.split.execute import RunResult
from perfport.split.plan import plan_split
from perfport.split.rebalance import (
    Iteration,
    balanced_shares,
    device_line,
    imbalance,
    rebalance,
    updated_lines,
)
from perfport.split.sweep import sweep, two_parts
from tune.cli_in_process import run_cli

TWO = ["--device", "opencl:0:0.0", "--device", "opencl:0:0.1"]
CONV = Problem.of(n=40000, mask=65)

# Every output passes (the fakes return none): the specs here are stand-ins.
ANY_OUTPUT = types.SimpleNamespace(
    of=lambda *a: types.SimpleNamespace(mismatch=lambda *a: None, check=lambda *a: Check.VERIFIED)
)


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def _run(kernel_ms: tuple[float, ...]) -> RunResult:
    return RunResult(1.0, kernel_ms, 3, 0.0, 0.0, {})


def test_a_device_line_goes_through_its_time_alone_and_its_part():
    assert device_line(1000, 11.0, 500, 6.0) == pytest.approx((1.0, 0.01))
    # too close to the whole problem to tell a slope, or a negative overhead: proportional
    assert device_line(1000, 11.0, 990, 10.0) == pytest.approx((0.0, 10.0 / 990))
    assert device_line(1000, 10.0, 500, 2.0) == pytest.approx((0.0, 0.004))
    assert device_line(1000, 10.0, 0, 0.0) == pytest.approx((0.0, 0.01))


def test_balanced_shares_end_together_and_drop_a_device_whose_overhead_is_too_big():
    # a: 1 ms per 100 elements; b: twice as slow: a gets 2/3
    assert balanced_shares(300, [(0.0, 0.01), (0.0, 0.02)]) == pytest.approx((2 / 3, 1 / 3))
    # b's overhead alone (5 ms) exceeds a's whole-problem time (3 ms): a takes everything
    assert balanced_shares(300, [(0.0, 0.01), (5.0, 0.001)]) == pytest.approx((1.0, 0.0))
    shares = balanced_shares(1000, [(0.5, 0.01), (1.0, 0.005)])
    ends = [a + b * s * 1000 for (a, b), s in zip([(0.5, 0.01), (1.0, 0.005)], shares, strict=True)]
    assert ends[0] == pytest.approx(ends[1], rel=1e-6)


def test_lines_update_only_for_devices_that_ran():
    plan = plan_split(["a", "b", "c"], 1000, [10, 10, 10], [10.0, 20.0, 40.0])
    plan = dataclasses.replace(plan, parts=((0, 500), (500, 500), (500, 1000)))
    kept = [(0.0, 1.0), (7.0, 7.0), (0.0, 1.0)]
    lines = updated_lines(plan, _run((6.0, 21.0)), plan.times_ms, kept)
    assert lines[1] == (7.0, 7.0)
    assert lines[0] == pytest.approx((2.0, 0.008)) and lines[2] == pytest.approx((2.0, 0.038))
    assert imbalance(_run((1.0, 1.5))) == pytest.approx(0.5)
    assert imbalance(_run((2.0,))) == 0.0


def test_a_launch_on_one_device_says_so_in_its_json():
    """--iterations could end on [0.0, 1.0] (a balanced split slower than one device alone)
    with nothing in the entry saying it ran on one device."""
    assert Iteration(((0, 0), (0, 10)), _run((2.0,)), 0.0, True).to_json()["single_device"]
    two_parts = Iteration(((0, 5), (5, 10)), _run((1.0, 1.0)), 0.0, True).to_json()
    assert two_parts["single_device"] is False


def test_given_factors_plan_whole_work_groups_and_a_dropped_device_takes_no_residue():
    plan = plan_split(["a", "b"], 1000, [64, 8], [1.0, 1.0], factors=(1.0, 0.0))
    assert plan.parts == ((0, 1000), (1000, 1000)) and plan.residue_device == 0
    with pytest.raises(SpecError, match="sum 1"):
        plan_split(["a", "b"], 1000, [64, 8], [1.0, 1.0], factors=(0.5, 0.4))


def test_two_parts_snap_to_both_devices_blocks():
    assert two_parts(1000, (64, 8), 0.5) == ((0, 448), (448, 1000))
    assert two_parts(1000, (64, 8), 0.0) == ((0, 0), (0, 1000))
    assert two_parts(1000, (64, 8), 1.0) == ((0, 1000), (1000, 1000))


def test_a_split_planned_from_wrong_times_is_rebalanced(two, monkeypatch):
    """The parts really run and are verified; their times are replaced by a fixed model (the
    two sub-devices alike: 1e-4 ms an element), so what the loop does with a plan made from
    wrong times does not depend on the machine's load."""
    from perfport.split import rebalance as module

    real = module.run_parts

    def modelled(spec, problem, parts, split, **kw):
        run = real(spec, problem, parts, split, **kw)
        times = tuple(1e-4 * (p.stop - p.start) for p in parts if p.stop > p.start)
        return dataclasses.replace(run, kernel_ms=times, wall_ms=max(times))

    monkeypatch.setattr(module, "run_parts", modelled)
    spec = builtin("convolution")
    full = spec.problem.merged(Problem.of(n=40000, mask=65))
    expected = reference_outputs(spec, full, 0)
    # A plan from times 1 and 10 gives the first 10/11: nine times the other's part.
    plan = plan_split([d.id for d in two], 40000, [64, 64], [1.0, 10.0])
    configs = [Config.of(wg=64), Config.of(wg=64)]
    done, last = rebalance(spec, full, two, configs, spec.split[0], plan, 3, expected, target_s=0.0)
    assert all(i.verified for i in done)
    assert done[0].parts == plan.parts and done[0].imbalance > 8
    first_share = (done[1].parts[0][1] - done[1].parts[0][0]) / 40000
    assert 0.45 < first_share < 0.55, done[1].parts  # alike devices: re-split to the middle
    assert done[1].imbalance < 0.1 and last.parts == done[-1].parts


def test_a_sweep_runs_every_share_and_verifies_it(two):
    spec = builtin("convolution")
    full = spec.problem.merged(CONV)
    expected = reference_outputs(spec, full, 0)
    configs = [Config.of(wg=64), Config.of(wg=32)]
    points = sweep(spec, full, two, configs, spec.split[0], (64, 32), 3, expected, target_s=0.0)
    assert [p.share for p in points] == [0.0, 0.5, 1.0]
    assert points[0].parts == ((0, 0), (0, 40000)) and len(points[0].run.kernel_ms) == 1
    assert all(p.verified for p in points)
    wrong = {k: np.zeros_like(v) for k, v in expected.items()}
    bad = sweep(spec, full, two, configs, spec.split[0], 64, 2, wrong, target_s=0.0)
    assert not any(p.verified for p in bad)


def test_cli_sweeps_and_rebalances(tmp_path, capfd):
    done = run_cli(
        capfd, "split", "convolution", *TWO, "--problem", "n=20000", "mask=33", "--sweep", "3",
        "--iterations", "2", "--db", tmp_path / "r.db", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [p["share"] for p in out["sweep"]] == [0.0, 0.5, 1.0]
    assert 1 <= len(out["iterations"]) <= 2 and out["iterations"][0]["parts"] == out["parts"]
    assert all(p["verified"] for p in out["sweep"] + out["iterations"])
    assert sum(out["rebalanced_factors"]) == pytest.approx(1.0)


def test_a_balanced_split_slower_than_the_fastest_device_alone_falls_back_to_it(monkeypatch):
    """Part times that agree while the launch takes longer than the fastest device alone (a
    CPU part slowing the GPU's host thread): the last launch runs that device alone."""
    from perfport.split import rebalance as module

    launches = []

    def fake(spec, problem, parts, split, target_s, opener=None, group=None):
        launches.append([(p.start, p.stop) for p in parts])
        busy = [p for p in parts if p.stop > p.start]
        return RunResult(3.0 if len(busy) > 1 else 1.0, (1.0,) * len(busy), 3, 0.0, 0.0, {})

    monkeypatch.setattr(module, "run_parts", fake)
    monkeypatch.setattr(module, "refusal", lambda *a: "")  # no spec to check parts against
    spec = types.SimpleNamespace(tolerance=None)
    monkeypatch.setattr(module, "Comparison", ANY_OUTPUT)
    plan = plan_split(["gpu", "cpu"], 1000, [10, 10], [1.0, 50.0])
    done, last = rebalance(spec, None, [None, None], [None, None], None, plan, 5, {})
    assert len(done) == 2 and done[0].imbalance == 0.0
    assert launches[1] == [(0, 1000), (1000, 1000)] and last.parts == ((0, 1000), (1000, 1000))


def test_a_balanced_split_is_held_to_the_measured_time_alone_not_a_predicted_one(monkeypatch):
    """Times from a model (the roofline: several times fast) plan the split; a balanced
    launch that beats the fastest device's measured time alone stops the loop, where the
    predicted time would have sent it to that device alone."""
    from perfport.split import rebalance as module

    launches = []

    def fake(spec, problem, parts, split, target_s, opener=None, group=None):
        launches.append([(p.start, p.stop) for p in parts])
        busy = [p for p in parts if p.stop > p.start]
        return RunResult(2.0 if len(busy) > 1 else 3.0, (1.0,) * len(busy), 3, 0.0, 0.0, {})

    monkeypatch.setattr(module, "run_parts", fake)
    monkeypatch.setattr(module, "refusal", lambda *a: "")  # no spec to check parts against
    spec = types.SimpleNamespace(tolerance=None)
    monkeypatch.setattr(module, "Comparison", ANY_OUTPUT)
    plan = plan_split(["gpu", "cpu"], 1000, [10, 10], [0.1, 0.5])  # predicted, 30x fast
    done, _ = rebalance(spec, None, [None, None], [None, None], None, plan, 5, {},
                        best_alone_ms=3.0)  # fmt: skip
    assert len(done) == 1 and len(launches) == 1
    # without the measured time the predicted 0.1 ms sends the balanced split to the GPU
    launches.clear()
    done, last = rebalance(spec, None, [None, None], [None, None], None, plan, 5, {})
    assert len(done) == 2 and last.parts == ((0, 1000), (1000, 1000))


def test_split_run_holds_the_rebalancer_to_the_measured_best_single(two, monkeypatch):
    from perfport.split import split as split_module

    seen = {}

    def rebalance_spy(*args, **kw):
        seen.update(kw)
        return (), None

    monkeypatch.setattr(split_module, "rebalance", rebalance_spy)
    times = {"opencl:0:0.0": 3.0, "opencl:0:0.1": 1e-3}
    out = split_module.split_run(builtin("convolution"), Problem.of(n=20000, mask=33), two,
                                 target_s=0.02, plan_from="eq4", iterations=2, times=times)  # fmt: skip
    assert out.single[1] is not None
    assert seen["best_alone_ms"] == out.single[1].wall_ms
