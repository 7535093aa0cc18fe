"""Inputs of the spec's own (issue 26 item 2): arrays given in Python or as .npy files, and an
argument that starts as a copy of another."""

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from perfport import RunSettings, Timing, load_kernel, tune
from perfport._core import ArrayArg, Check, Init, Outcome, SpecError
from perfport.measure.data import host_arrays, reference_outputs

SETTINGS = RunSettings(timing=Timing.fixed(2), timeout_s=10.0)
SMOOTH = Path(__file__).parents[2] / "examples" / "inputs" / "smooth.toml"


def _copy_example(tmp_path: Path, edit: tuple[str, str] | None = None) -> Path:
    for f in SMOOTH.parent.iterdir():
        shutil.copy(f, tmp_path / f.name)
    if edit is not None:
        text = (tmp_path / "smooth.toml").read_text()
        assert edit[0] in text
        (tmp_path / "smooth.toml").write_text(text.replace(*edit))
    return tmp_path / "smooth.toml"


def test_given_array_and_copy_reach_the_kernel(db):
    spec = load_kernel(SMOOTH)
    given = np.load(SMOOTH.parent / "in.npy")
    arrays = host_arrays(spec, spec.env({}, spec.problem), seed=7)
    assert np.array_equal(arrays["in"], given) and np.array_equal(arrays["out"], given)
    assert arrays["out"] is not arrays["in"]
    result = tune(spec, db=db, settings=SETTINGS)
    assert {m.outcome for m in result.measurements} == {Outcome.OK}
    assert {m.check for m in result.measurements} == {Check.VERIFIED}


def test_without_the_copy_the_stencil_is_wrong(db):
    """The kernel leaves the boundary alone: only a copy of the input makes it right."""
    spec = load_kernel(SMOOTH)
    args = tuple(
        dataclasses.replace(a, init=Init.ZEROS, copy_of="") if a.name == "out" else a
        for a in spec.args
    )
    result = tune(dataclasses.replace(spec, args=args), configs=[{"wg": 16}], db=db,
                  settings=SETTINGS)  # fmt: skip
    (m,) = result.measurements
    assert m.outcome is Outcome.WRONG_RESULT and "'out'[0]" in m.message


def test_python_data_is_checked_against_the_declaration():
    x = np.arange(8, dtype=np.float32)
    arg = ArrayArg("in", "float", ("n",), data=x)
    assert arg.init is Init.DATA and "data" in arg.__dict__
    smooth = load_kernel(SMOOTH)
    spec = dataclasses.replace(smooth, args=(arg, *smooth.args[1:]), reference=None)
    with pytest.raises(SpecError, match=r"the given array is float32\[8\], the spec declares"):
        host_arrays(spec, {"n": 16}, 0)
    assert np.array_equal(host_arrays(spec, {"n": 8}, 0)["in"], x)
    with pytest.raises(SpecError, match="numeric numpy array"):
        ArrayArg("x", "float", ("n",), data=np.array(["a"]))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('file = "in.npy"', 'file = "nothere.npy"'), "file 'nothere.npy' does not exist beside"),
        (('file = "in.npy"', 'file = "smooth.cl"'), "file must name a .npy file"),
        (('init = "copy:in"', 'init = "copy:inn"'), "init 'copy:inn' names no other array"),
        (('init = "copy:in"', 'init = "copy:out"'), "init 'copy:out' names no other array"),
        (('init = "copy:in"', 'init = "cpy:in"'), "must be one of random, zeros, ones, arange"),
        (("output = true }", "output = true, atol = 'x' }"), "atol must be a number >= 0"),
    ],
)
def test_malformed_inputs_are_one_line_errors_at_load(tmp_path, edit, message):
    path = _copy_example(tmp_path, edit)
    with pytest.raises(SpecError, match=message) as e:
        load_kernel(path)
    assert "\n" not in str(e.value)


def test_a_wrong_npy_is_refused_before_anything_is_stored(tmp_path):
    path = _copy_example(tmp_path)
    np.save(tmp_path / "in.npy", np.zeros(1024, np.float64))
    db = tmp_path / "r.db"
    with pytest.raises(SpecError, match=r"argument in: the given array is float64\[1024\]") as e:
        tune(load_kernel(path), db=db, settings=SETTINGS)
    assert "\n" not in str(e.value) and not db.exists()
    with pytest.raises(SpecError, match=r"float32\[1024\], the spec declares float32\[512\]"):
        np.save(tmp_path / "in.npy", np.zeros(1024, np.float32))
        tune(load_kernel(path), problem={"n": 512}, db=db, settings=SETTINGS)
    assert not db.exists()


def test_a_reference_of_the_wrong_size_is_a_spec_error():
    """A numpy reference returning more or fewer elements than the output is declared with
    is the reference's bug: one error, not every configuration a wrong_result."""
    spec = load_kernel(Path(__file__).parents[1] / "data" / "probe.py")
    wrong = dataclasses.replace(spec, reference=_one_too_many)
    with pytest.raises(SpecError, match=r"returned b with 257 elements; .*float32\[256\]"):
        reference_outputs(wrong, wrong.problem, 0)
    assert reference_outputs(spec, spec.problem, 0)["b"].size == 256


def test_a_reference_returning_a_bare_array_is_told_the_dict_it_must_return():
    """A bare array was turned into a dict by dict(): 'cannot convert dictionary update
    sequence element #0 to a sequence'."""
    spec = load_kernel(Path(__file__).parents[1] / "data" / "probe.py")
    bare = dataclasses.replace(spec, reference=lambda problem, inputs: np.zeros(256, np.float32))
    with pytest.raises(SpecError, match=r"returned ndarray, not a dict; .*\{'b': array\}$"):
        reference_outputs(bare, bare.problem, 0)


def _one_too_many(problem, inputs):
    return {"b": np.zeros(problem["n"] + 1, np.float32)}
