"""A model or calibration file with a field of the wrong kind is refused naming the field and
what it should be; Python's own words leaked before ('dictionary update sequence element #0
has length 3', "'int' object is not iterable", "float() argument must be ... not
'NoneType'")."""

from __future__ import annotations

import json

import pytest

from perfport.model import Calibration, Model, ModelError

MODEL = {"format": "perfport-model/1", "output": "f_t", "expression": "p_a * f_thread_groups"}
CALIBRATION = {
    "format": "perfport-calibration/1", "model": MODEL, "device": "dev",
    "parameters": {"p_a": 1e-9}, "residual": 0.1, "residuals": [0.1, -0.1],
    "n_measurements": 2, "nonnegative": True, "negative": [], "scaled": True, "iterations": 3,
    "uninformed": {}, "bounded": False, "at_bound": [], "unbounded_negative": [],
}  # fmt: skip


def test_the_files_here_are_good():
    assert Calibration.from_json(CALIBRATION).parameters == {"p_a": 1e-9}
    assert Calibration.from_json({**CALIBRATION, "subgroup_size": 64}).subgroup_size == 64
    assert Model.from_json({**MODEL, "features": {"f_x": "2 * f_thread_groups"}})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("parameters", {"p_a": None}, "parameters.p_a is null, not a number"),
        ("parameters", [["p_a", 1e-9]], "parameters must be a JSON object, e.g."),
        ("negative", 5, r'negative must be a list of names, e.g. \["p_launch"\], not a number'),
        ("uninformed", ["p_a"], "uninformed must be a JSON object, e.g."),
        ("residuals", "x", "residuals must be a list of numbers, not a string"),
        ("residuals", [0.1, None], r"residuals\[1\] is null, not a number"),
        ("n_measurements", "x", "n_measurements is 'x', not a number"),
        ("iterations", 2.5, "iterations is 2.5, not a whole number"),
        # Each accepted before: a cost as a string, a width as a string or past any device's,
        # and "false" read as true.
        ("parameters", {"p_a": "1e-7"}, "parameters.p_a is '1e-7', not a number; write it "
         "without quotes"),
        ("residual", "0.1", "residual is '0.1', not a number; write it without quotes"),
        ("subgroup_size", "32", "subgroup_size is '32', not a whole number from 1 to 1024"),
        ("subgroup_size", 1e30, "subgroup_size is 1e\\+30, not a whole number from 1 to 1024"),
        ("subgroup_size", 32.0, "subgroup_size is 32.0, not a whole number from 1 to 1024"),
        ("subgroup_size", 2048, "subgroup_size is 2048, not a whole number from 1 to 1024"),
        ("subgroup_size", 0, "subgroup_size is 0, not a whole number from 1 to 1024"),
        ("nonnegative", "false", "nonnegative must be true or false, not a string"),
        ("scaled", 1, "scaled must be true or false, not a number"),
        ("bounded", None, "bounded must be true or false, not null"),
    ],
)  # fmt: skip
def test_a_calibration_field_of_the_wrong_kind_is_named(field, value, message):
    with pytest.raises(ModelError, match=rf"calibration file: missing or bad field \({message}"):
        Calibration.from_json({**CALIBRATION, field: value})


def test_a_missing_calibration_field_is_named():
    data = {k: v for k, v in CALIBRATION.items() if k != "residual"}
    with pytest.raises(ModelError, match=r"missing or bad field \(no 'residual' field\)"):
        Calibration.from_json(data)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("features", ["f_x"], "features must be a JSON object, e.g."),
        ("initial", {"p_a": "x"}, "initial.p_a is 'x', not a number"),
        ("initial", [1], "initial must be a JSON object"),
        ("shape", [1], "shape must be a list of names"),
    ],
)
def test_a_model_field_of_the_wrong_kind_is_named(field, value, message):
    with pytest.raises(ModelError, match=rf"model file: missing or bad field \({message}") as exc:
        Model.from_json(json.loads(json.dumps({**MODEL, field: value})))
    assert "\n" not in str(exc.value)
