"""Every outcome, through the worker process, in one campaign that completes."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

from conftest import DATA
from perfport import (
    ArrayArg,
    KernelSpec,
    Param,
    ParamKind,
    RunSettings,
    ScalarArg,
    Timing,
    load_kernel,
    tune,
)
from perfport._core import Config, Outcome, Problem
from perfport.devices import open_session
from perfport.measure import TrialEngine

# A launch of the probe takes microseconds: 2 s is ample, and it is how long the hanging
# configuration spins every core before the worker is killed.
SETTINGS = RunSettings(timing=Timing.fixed(2), timeout_s=2.0)


def test_every_outcome_and_the_campaign_completes(db):
    spec = load_kernel(DATA / "probe.py")
    result = tune(spec, strategy="brute_force", db=db, settings=SETTINGS)
    assert result.status.value == "complete"
    by_mode = {}
    for m in result.measurements:
        by_mode.setdefault((m.config["MODE"], m.config["wg"]), m)
    outcome = {k: m.outcome for k, m in by_mode.items()}
    assert outcome[(0, 8)] is Outcome.OK and outcome[(0, 16)] is Outcome.OK
    assert outcome[(1, 8)] is Outcome.COMPILE_ERROR
    assert "does not compile" in by_mode[(1, 8)].message
    assert outcome[(2, 8)] is Outcome.WRONG_RESULT
    assert outcome[(3, 8)] is Outcome.TIMEOUT
    assert outcome[(4, 8)] is Outcome.CRASHED
    assert "SIGSEGV" in by_mode[(4, 8)].message or "killed" in by_mode[(4, 8)].message
    assert outcome[(5, 8)] is Outcome.LAUNCH_REFUSED
    assert "INVALID_WORK_GROUP_SIZE" in by_mode[(5, 8)].message
    assert outcome[(5, 16)] is Outcome.OK  # the size it demands works
    # lmem = 2^30 floats cannot fit any device's local memory: pruned without a launch.
    assert result.pruned == 10 and all(m.config["lmem"] == 1 for m in result.measurements)
    counts = Counter(m.outcome for m in result.measurements)
    assert counts[Outcome.OK] == 3 and len(result.measurements) == 10
    assert result.best is not None and result.best.config["MODE"] in (0, 5)


def test_reference_configuration_catches_wrong_result(db):
    """Without a numpy reference, the default configuration's output is the gold."""
    spec = dataclasses.replace(
        load_kernel(DATA / "probe.py"), reference=None, restrictions=("MODE in (0, 2)",)
    )
    result = tune(spec, strategy="brute_force", db=db, settings=SETTINGS)
    assert result.verification == "reference configuration MODE=0 lmem=1 wg=8"
    outcome = {(m.config["MODE"], m.config["wg"]): m.outcome for m in result.measurements}
    assert outcome == {
        (0, 8): Outcome.OK,
        (0, 16): Outcome.OK,
        (2, 8): Outcome.WRONG_RESULT,
        (2, 16): Outcome.WRONG_RESULT,
    }


def test_limits_checked_before_any_build(cpu):
    spec = load_kernel(DATA / "probe.py")
    engine = TrialEngine(open_session(cpu), spec, Problem(), SETTINGS)
    too_much_local = engine.run(Config.of(MODE=0, wg=8, lmem=1 << 30))
    assert too_much_local.outcome is Outcome.PRUNED and "local memory" in too_much_local.message
    assert too_much_local.compile_ms is None  # decided before compiling


BUSY = KernelSpec(
    name="busy",
    source="""
__kernel void busy(__global float* out, int iterations) {
    float x = get_global_id(0);
    for (int k = 0; k < iterations; ++k)
        x = x * 0.999f + 1.0f;
    out[get_global_id(0)] = x;
}
""",
    entry="busy",
    params=(Param("wg", (2,), ParamKind.LAUNCH),),
    global_size=("64",),
    local_size=("wg",),
    args=(
        ArrayArg("out", "float", ("64",), output=True),
        ScalarArg("iterations", "int", "iterations"),
    ),
    problem={"iterations": 12_000_000},
    default={"wg": 2},
)


@pytest.mark.slow
def test_slow_is_not_hung(db):
    """The time limit applies to each launch, not to a whole trial: many slow launches pass."""
    probe = tune(BUSY, strategy="brute_force", db=db, settings=RunSettings(timing=Timing.fixed(1)))
    one_launch_s = max(m.time_ms for m in probe.measurements) / 1000.0
    settings = RunSettings(timing=Timing.fixed(6), timeout_s=max(2.0, 3 * one_launch_s))
    result = tune(BUSY, strategy="brute_force", db=db, settings=settings, campaign="many-launches")
    # 1 verification + 1 warm-up + 6 timed launches: past the limit in total.
    assert 8 * one_launch_s > settings.timeout_s, "the kernel got too fast for this test"
    assert [m.outcome for m in result.measurements] == [Outcome.OK]
    assert result.verification.startswith("reference configuration")


def test_scalar_argument_of_a_compile_time_parameter(cpu):
    """A scalar's value may use the configuration (docs/kernel-spec.md): it is computed for
    each trial, not once per problem (which failed when the worker started)."""
    spec = KernelSpec(
        name="chunked",
        source="""
__kernel void chunked(__global int* out, int chunk) {
    out[get_global_id(0)] = chunk == CHUNK * 2 ? 1 : 0;
}
""",
        entry="chunked",
        params=(Param("CHUNK", (1, 4)),),
        global_size=("n",),
        local_size=("1",),
        args=(
            ArrayArg("out", "int", ("n",), output=True),
            ScalarArg("chunk", "int", "CHUNK * 2"),
        ),
        problem={"n": 8},
        reference=_all_ones,
    )
    engine = TrialEngine(open_session(cpu), spec, Problem(), SETTINGS)
    engine.use_expected({"out": _all_ones({"n": 8}, {})["out"]}, "ones")
    for chunk in (1, 4):
        assert engine.run(Config.of(CHUNK=chunk)).outcome is Outcome.OK


def _all_ones(problem, inputs):
    return {"out": np.ones(problem["n"], np.int32)}
