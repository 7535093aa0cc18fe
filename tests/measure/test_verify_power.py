"""Verification with a Kernel Tuner user's power (issue 26): outputs ignored, per-output
tolerances, a verify function, a reference computed by another kernel; and loud when off."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from perfport import RunSettings, Timing, load_kernel, tune
from perfport._core import ArrayArg, Check, Outcome, SpecError
from perfport.kernels.loader import import_file
from perfport.measure.verify import mismatch, verify_failure
from perfport.tune.tune import verification_plan

SETTINGS = RunSettings(timing=Timing.fixed(2), timeout_s=10.0)
REDUCE = Path(__file__).parents[2] / "examples" / "reduction" / "reduce.toml"
# The default, a correct configuration with other partial sums, and a wrong one.
CONFIGS = [{"wg": 8, "BUG": 0}, {"wg": 32, "BUG": 0}, {"wg": 32, "BUG": 1}]


def _outcomes(result):
    return {(m.config["wg"], m.config["BUG"]): m for m in result.measurements}


def _with_partial(spec, **changes):
    args = tuple(dataclasses.replace(a, **changes) if a.name == "partial" else a for a in spec.args)
    return dataclasses.replace(spec, args=args)


def test_reference_kernel_and_an_ignored_output_verify_a_reduction(db):
    spec = load_kernel(REDUCE)
    result = tune(spec, configs=CONFIGS, db=db, settings=SETTINGS)
    by = _outcomes(result)
    assert by[(32, 0)].outcome is Outcome.OK and by[(32, 0)].check is Check.VERIFIED
    assert by[(8, 0)].check is Check.VERIFIED  # no configuration is the gold: a kernel is
    assert by[(32, 0)].verified_against == "reference kernel reduce_serial"
    assert by[(32, 1)].outcome is Outcome.WRONG_RESULT and "'total'" in by[(32, 1)].message
    assert result.warnings == ()


def test_without_ignore_the_partial_sums_fail_and_a_verify_function_passes_them(db):
    """The issue's reduction: with the default configuration's outputs as the gold, every
    other work-group size is wrong, unless a verify function compares what matters."""
    spec = _with_partial(load_kernel(REDUCE), ignore=False)
    plain = dataclasses.replace(spec, reference_kernel=None)
    by = _outcomes(tune(plain, configs=CONFIGS[:2], db=db, settings=SETTINGS))
    assert by[(32, 0)].outcome is Outcome.WRONG_RESULT  # what the user saw
    checks = import_file(REDUCE.parent / "checks.py")
    summed = dataclasses.replace(plain, verify=checks.same_sum)
    by = _outcomes(tune(summed, configs=CONFIGS, db=db, settings=SETTINGS))
    assert by[(8, 0)].check is Check.REFERENCE
    assert by[(32, 0)].outcome is Outcome.OK and by[(32, 0)].check is Check.VERIFIED
    assert "verify function same_sum" in by[(32, 0)].verified_against
    assert by[(32, 1)].outcome is Outcome.WRONG_RESULT
    assert by[(32, 1)].message == "the verify function returned False"


def test_a_verify_function_that_raises_is_a_wrong_result_not_a_crash(db, tmp_path):
    text = REDUCE.read_text().replace("[reference_kernel]", 'verify = "checks.py:broken"\n[x]')
    text = text.split("[x]")[0]
    (tmp_path / "reduce.cl").write_text((REDUCE.parent / "reduce.cl").read_text())
    (tmp_path / "checks.py").write_text((REDUCE.parent / "checks.py").read_text())
    (tmp_path / "r.toml").write_text(text)
    spec = load_kernel(tmp_path / "r.toml")
    result = tune(spec, configs=CONFIGS[:2], db=db, settings=SETTINGS)
    assert result.status.value == "complete"
    m = _outcomes(result)[(32, 0)]
    assert m.outcome is Outcome.WRONG_RESULT and m.time_ms is None
    assert m.message == (
        "the verify function raised ValueError: this verify function is broken on purpose"
    )


def test_a_reference_kernel_that_does_not_compile_is_a_one_line_error(db):
    spec = load_kernel(REDUCE)
    bad = dataclasses.replace(
        spec.reference_kernel, source="__kernel void reduce_serial( {", entry="reduce_serial"
    )
    with pytest.raises(Exception, match="reference kernel reduce_serial gave compile_error") as e:
        tune(dataclasses.replace(spec, reference_kernel=bad), configs=CONFIGS[:1], db=db,
             settings=SETTINGS)  # fmt: skip
    assert "\n" not in str(e.value)


def test_per_output_tolerances():
    want = {"y": np.array([1.0, 100.0], np.float32)}
    got = {"y": np.array([1.05, 100.0], np.float32)}
    assert mismatch(got, want, None) is None  # 0.05 is within 1e-3 of max |expected|
    assert "atol 0.01" in mismatch(got, want, None, {"y": (0.01, 0.0)})
    assert mismatch(got, want, None, {"y": (0.1, 0.0)}) is None
    assert mismatch(got, want, None, {"y": (0.0, 0.1)}) is None  # 0.05 <= 0.1 * 1.0
    ints = {"y": np.array([3, 5])}
    assert mismatch({"y": np.array([3, 6])}, ints, None, {"y": (1.0, 0.0)}) is None
    assert mismatch({"y": np.array([3, 6])}, ints, None) is not None


def test_verify_function_answers():
    e = {"y": np.zeros(2)}
    assert verify_failure(lambda a, b: True, e, e) is None
    assert (
        verify_failure(lambda a, b: np.bool_(False), e, e) == "the verify function returned False"
    )
    assert "returned int" in verify_failure(lambda a, b: 1, e, e)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"atol": 0.1}, "atol, rtol and ignore apply to output arrays"),
        ({"rtol": -1.0}, "rtol must be a number >= 0"),
        ({"ignore": "yes"}, "ignore must be true or false"),
    ],
)
def test_malformed_checks_are_one_line_errors(edit, message):
    with pytest.raises(SpecError, match=message):
        ArrayArg("x", "float", ("n",), **edit)


def test_toml_verify_follows_the_reference_allow_list(tmp_path):
    (tmp_path / "reduce.cl").write_text((REDUCE.parent / "reduce.cl").read_text())
    for line, message in [
        ('verify = "os:system"', "verify 'os:system': module 'os' is not allowed"),
        ('verify = "nothere.py:f"', "does not exist beside the spec"),
        ("[reference_kernel]\nsource = 'x'", "reference_kernel must be a table with 'entry'"),
    ]:
        text = REDUCE.read_text().split("[reference_kernel]")[0] + line + "\n"
        (tmp_path / "r.toml").write_text(text)
        with pytest.raises(SpecError, match=message) as e:
            load_kernel(tmp_path / "r.toml")
        assert "\n" not in str(e.value)


def test_an_unverified_plan_is_said_before_the_campaign(db):
    spec = load_kernel(REDUCE)
    assert verification_plan(spec, SETTINGS) == ()
    off = verification_plan(spec, dataclasses.replace(SETTINGS, verify=False))
    assert off and "not be verified" in off[0]
    nothing = dataclasses.replace(_with_partial(spec), reference_kernel=None, default=None)
    assert "first configuration that runs" in verification_plan(nothing, SETTINGS)[0]
    blind = dataclasses.replace(
        spec,
        reference_kernel=None,
        args=tuple(
            dataclasses.replace(a, ignore=True) if getattr(a, "output", False) else a
            for a in spec.args
        ),
    )
    assert "is ignored" in verification_plan(blind, SETTINGS)[0]
    said: list[str] = []
    result = tune(blind, configs=CONFIGS[:2], db=db, settings=SETTINGS, warn=said.append)
    assert said and "is ignored" in said[0]
    assert all(m.check is Check.UNVERIFIED for m in result.measurements)
    assert result.to_json()["best"]["verified"] is False
