import numpy as np
import pytest

from perfport import ArrayArg, KernelSpec, Param, ParamKind
from perfport._core import SpecError
from perfport.measure.data import reference_outputs
from perfport.measure.verify import mismatch, nonfinite_output


def test_float_tolerance_is_relative_to_the_largest_value():
    want = np.linspace(0, 1000, 100, dtype=np.float32)
    assert mismatch({"o": want + 0.5}, {"o": want}, 1e-3) is None  # 0.5 <= 1e-3 * 1000
    message = mismatch({"o": want + 2.0}, {"o": want}, 1e-3)
    assert message and "output 'o'[" in message and "tolerance" in message


def test_non_finite_values():
    want = np.ones(10, np.float32)
    got = want.copy()
    got[3] = np.nan
    assert "'o'[3] is nan" in mismatch({"o": got}, {"o": want}, 1e-3)
    want_nan = want.copy()
    want_nan[5] = np.nan
    assert mismatch({"o": want_nan.copy()}, {"o": want_nan}, 1e-3) is None
    got = want_nan.copy()
    got[5] = 1.0
    assert "'o'[5]" in mismatch({"o": got}, {"o": want_nan}, 1e-3)
    got = want.copy()
    got[7] = np.inf
    assert "'o'[7] is inf" in mismatch({"o": got}, {"o": want}, 1e-3)


def test_integers_exact_and_sizes():
    want = np.arange(10, dtype=np.int32)
    got = want.copy()
    got[4] = 0
    assert "'o'[4] is 0, expected 4 (1 elements differ)" in mismatch({"o": got}, {"o": want}, None)
    assert "elements" in mismatch({"o": want[:5]}, {"o": want}, None)
    assert "not an output" in mismatch({}, {"o": want}, None)


def test_an_integer_output_is_exact_against_a_float_reference():
    """The output's type decides: a float64 reference must not give an int output the float
    tolerance (1e-3 of the largest value let an off-by-one through)."""
    want = np.arange(1000, dtype=np.float64) * 2.0
    got = want.astype(np.int32)
    assert mismatch({"o": got}, {"o": want}, 1e-3) is None
    got[7] += 1
    assert "'o'[7] is 15, expected 14.0 (1 elements differ)" in mismatch(
        {"o": got}, {"o": want}, 1e-3
    )


def _int_spec(reference, **out):
    src = "__kernel void k(__global int* y, __global const float* x) { }"
    return KernelSpec(
        name="whole", source=src, entry="k", params=(Param("wg", (64,), ParamKind.LAUNCH),),
        global_size=("n",), local_size=("wg",), problem={"n": 64}, default={"wg": 64},
        args=(ArrayArg("y", "int", ("n",), output=True, **out), ArrayArg("x", "float", ("n",))),
        reference=reference,
    )  # fmt: skip


def test_a_float_reference_of_an_integer_output_must_be_whole_numbers():
    """Non-whole expected values for an int output could never match: the reference is at
    fault, said in one line naming the output and the fix."""
    scaled = _int_spec(lambda p, i: {"y": i["x"].astype(np.float64) * 100.0})
    with pytest.raises(SpecError, match=r"returned y\[0\] = .*not a whole number, for the int32 "
                       r"output y.*round in the reference \(np.rint\)"):  # fmt: skip
        reference_outputs(scaled, {}, 0)
    rounded = _int_spec(lambda p, i: {"y": np.floor(i["x"].astype(np.float64) * 100.0)})
    assert reference_outputs(rounded, {}, 0)["y"].dtype == np.float64
    loose = _int_spec(lambda p, i: {"y": i["x"] * 100.0}, atol=1.0)  # a tolerance is asked for
    assert reference_outputs(loose, {}, 0)["y"].size == 64


def test_an_output_of_only_nan_or_infinity_is_named():
    nan = np.full(8, np.nan, np.float32)
    nan[2] = np.inf
    some = nan.copy()
    some[5] = 1.0
    assert nonfinite_output({"a": some, "b": np.zeros(8, np.int32), "c": nan}) == "c"
    assert nonfinite_output({"a": some}) is None
