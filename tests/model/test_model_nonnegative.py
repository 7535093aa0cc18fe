"""The bounded (non-negative) calibration: on synthetic data whose unconstrained optimum has a
negative cost, the bounded fit must give the constrained least-squares optimum (checked
against scipy's NNLS), leave shape parameters free, and report what it bounded."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.model import Calibration, Measurement, Model, calibrate

pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

FEATURES = ("f_op_float32_add", "f_op_float32_mul", "f_op_float32_div")


def _rows(
    true: tuple[float, float, float], n: int = 30, seed: int = 3, low: float = 1e6
) -> list[Measurement]:
    """Times of three counted operations at costs ``true`` (seconds each), with 5% noise;
    the first count at least ``low``."""
    rng = np.random.default_rng(seed)
    counts = rng.uniform(1e6, 1e8, size=(n, 3))
    counts[:, 0] = np.maximum(counts[:, 0], low)
    times = counts @ np.array(true) * rng.uniform(0.95, 1.05, size=n)
    return [
        Measurement(f"k{i}", {}, dict(zip(FEATURES, map(float, c), strict=True)), float(t))
        for i, (c, t) in enumerate(zip(counts, times, strict=True))
    ]


LINEAR = Model("f_x", " + ".join(f"p_{i} * {f}" for i, f in enumerate(FEATURES)))


def test_a_negative_unconstrained_cost_is_bounded_to_the_nnls_optimum():
    from scipy.optimize import nnls

    # p_2's true cost is slightly negative: the unconstrained fit finds it below 0.
    rows = _rows((2e-9, 1e-9, -3e-11))
    free = calibrate(LINEAR, rows)
    assert free.negative == ("p_2",) and not free.bounded

    c = calibrate(LINEAR, rows, nonnegative=True)
    assert c.bounded and c.nonnegative and c.negative == ()
    assert c.at_bound == ("p_2",) and c.unbounded_negative == ("p_2",)
    assert c.parameters["p_2"] == 0.0 or abs(c.parameters["p_2"]) < 1e-20
    # relative-error least squares: rows divided by the measured time, target 1
    a = np.array([[r.features[f] / r.output for f in FEATURES] for r in rows])
    expected, _ = nnls(a, np.ones(len(rows)))
    for i, value in enumerate(expected):
        assert c.parameters[f"p_{i}"] == pytest.approx(value, rel=1e-6, abs=1e-20)
    assert c.residual >= free.residual


def test_a_fit_that_is_already_nonnegative_keeps_levenberg_marquardt():
    rows = _rows((2e-9, 1e-9, 3e-10))
    free = calibrate(LINEAR, rows)
    c = calibrate(LINEAR, rows, nonnegative=True)
    assert c.nonnegative and not c.bounded and c.at_bound == () and c.unbounded_negative == ()
    assert c.parameters == free.parameters and c.iterations == free.iterations


def test_shape_parameters_keep_their_sign():
    # t = p_0 * adds + p_1 * muls + p_s * divs, p_s a shape (not a cost) parameter
    model = Model("f_x", "p_0 * f_op_float32_add + p_1 * f_op_float32_mul + p_s * "
                  "f_op_float32_div", shape=("p_s",))  # fmt: skip
    rows = _rows((2e-9, -2e-10, -4e-10), low=1e8)
    c = calibrate(model, rows, nonnegative=True)
    assert c.bounded and c.at_bound == ("p_1",) and c.parameters["p_s"] < 0


def test_the_bounded_fit_round_trips_and_old_files_still_load(tmp_path):
    c = calibrate(LINEAR, _rows((2e-9, 1e-9, -3e-11)), nonnegative=True)
    c.save(tmp_path / "c.json")
    back = Calibration.load(tmp_path / "c.json")
    assert back.bounded and back.at_bound == ("p_2",) and back.unbounded_negative == ("p_2",)
    old = c.to_json()
    for key in ("bounded", "at_bound", "unbounded_negative"):
        del old[key]
    legacy = Calibration.from_json(old)
    assert not legacy.bounded and legacy.at_bound == ()
