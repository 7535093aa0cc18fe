import numpy as np

from perfport.measure.verify import mismatch


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
