"""Model formulas (safe parsing, symbolic Jacobian) and Levenberg-Marquardt calibration on
synthetic measurements whose true parameters are known."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.model import (
    Calibration,
    Measurement,
    Model,
    ModelError,
    calibrate,
    linear_model,
    overlap_model,
    predict,
)

pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

PAPER = (
    "p_f32madd * f_op_float32_madd + p_f32l * f_mem_access_local_float32 + "
    "p_f32ga * f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:0}_afr:>1 + "
    "p_barrier * f_sync_barrier_local * f_thread_groups + p_launch * f_sync_kernel_launch"
)


def test_the_papers_model_parses_into_parameters_and_features():
    m = Model("f_cl_wall_time_nvidia_h100", PAPER)
    assert m.parameters == ("p_barrier", "p_f32ga", "p_f32l", "p_f32madd", "p_launch")
    assert (
        "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:0}_afr:>1" in m.features
    )
    assert len(m.terms()) == 5
    m.check_features()


@pytest.mark.parametrize(
    ("expression", "hint"),
    [
        ("p_a * f_op_float32_madd +", "not valid syntax"),
        ("__import__('os').system('true')", "Call is not allowed"),
        ("p_a * x", "unknown name 'x'"),
        ("p_a.real * f_thread_groups", "Attribute is not allowed"),
        ("p_a * 'text'", "not a number"),
        ("", "empty"),
        # said 'not finite at its starting values; give other initial values' at calibration
        ("p_a * f_thread_groups ** 99999999999", "exponent larger than 256"),
        ("p_a * f_thread_groups + 9**9**9**9", "exponent larger than 256"),
        ("p_a * f_thread_groups ** -(2 ** 9)", "exponent larger than 256"),
    ],
)
def test_bad_expressions_get_one_line_errors(expression, hint):
    with pytest.raises(ModelError, match=hint) as exc:
        Model("f_cl_wall_time_a_b", expression)
    assert "\n" not in str(exc.value)


def test_a_feature_definition_with_a_huge_exponent_is_refused():
    with pytest.raises(ModelError, match=r"feature f_x: exponent larger than 256"):
        Model("f_y", "p_a * f_x", definitions={"f_x": "f_thread_groups ** 9 ** 9 ** 9"})
    assert Model("f_y", "p_a * f_thread_groups ** 2 + p_b * f_thread_groups ** p_c").parameters


def test_a_syntax_error_names_the_users_features_not_placeholders():
    with pytest.raises(ModelError) as exc:
        Model("f_x", "p_a * (f_op_float32_madd + f_thread_groups")
    assert "_feature_" not in str(exc.value)
    assert "f_op_float32_madd" in str(exc.value)


def test_a_model_files_shape_given_as_one_string_is_refused_naming_the_list():
    data = {"format": "perfport-model/1", "output": "f_x", "expression": "p_a * f_thread_groups"}
    with pytest.raises(ModelError, match=r"shape must be a list.*\['p_a'\]"):
        Model.from_json({**data, "shape": "p_a"})
    assert Model.from_json({**data, "shape": ["p_a"]}).shape == ("p_a",)


def test_unknown_features_are_named_before_calibration():
    with pytest.raises(ModelError, match="unknown feature 'f_bogus'"):
        Model("f_cl_wall_time_a_b", "p_a * f_bogus").check_features()


def test_the_symbolic_jacobian_matches_finite_differences():
    m = Model(
        "f_x",
        "p_a * f_u + exp(p_b * f_v) / (1 + p_c ** 2) + tanh(p_a * p_c * f_u) + sqrt(p_b) * log(f_v)",
    )
    rng = np.random.default_rng(1)
    features = {"f_u": rng.uniform(0.5, 2, 6), "f_v": rng.uniform(0.5, 2, 6)}
    params = {"p_a": 0.7, "p_b": 0.3, "p_c": 1.3}
    jac = m.jacobian(params, features)
    for j, name in enumerate(m.parameters):
        h = 1e-6
        up = m.evaluate({**params, name: params[name] + h}, features)
        down = m.evaluate({**params, name: params[name] - h}, features)
        assert np.allclose(jac[:, j], (up - down) / (2 * h), rtol=1e-5, atol=1e-8)


def _synthetic(model, truth, n=40, noise=0.0, seed=0):
    """Measurements whose features vary independently (as microbenchmarks make them)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        features = {f: float(rng.uniform(1e3, 1e6)) for f in model.features}
        features["f_sync_kernel_launch"] = 1.0
        t = float(model.evaluate(truth, features)) * (1 + noise * rng.standard_normal())
        rows.append(Measurement(f"k{i}", {"n": i}, features, t))
    return rows


def test_linear_calibration_recovers_known_parameters():
    m = linear_model(
        "f_cl_wall_time_pocl_cpu",
        {"p_g": "f_mem_access_global"},
        {"p_madd": "f_op_float32_madd", "p_l": "f_mem_access_local"},
        {"p_launch": "f_sync_kernel_launch"},
    )
    truth = {"p_g": 4e-9, "p_madd": 5e-11, "p_l": 3e-10, "p_launch": 2e-5}
    c = calibrate(m, _synthetic(m, truth), device="pocl")
    for p, v in truth.items():
        assert c.parameters[p] == pytest.approx(v, rel=1e-6)
    assert c.nonnegative and c.residual < 1e-9 and c.n_measurements == 40
    noisy = calibrate(m, _synthetic(m, truth, noise=0.01))
    for p in ("p_g", "p_madd", "p_l"):  # launch is a tiny share of these times: noise hides it
        assert noisy.parameters[p] == pytest.approx(truth[p], rel=0.05)
    assert noisy.residual > c.residual


def test_the_overlap_model_recovers_costs_and_a_steep_edge():
    m = overlap_model(
        "f_cl_wall_time_pocl_cpu",
        {"p_g": "f_mem_access_global"},
        {"p_l": "f_mem_access_local"},
        {"p_launch": "f_sync_kernel_launch"},
    )
    truth = {"p_g": 1e-8, "p_l": 2e-9}
    rng = np.random.default_rng(3)
    rows = []
    for i in range(60):  # the section 7.4 kernel: one global access and r local ones
        r = float(rng.uniform(0.5, 12))
        f = {"f_mem_access_global": 1e5, "f_mem_access_local": r * 1e5, "f_sync_kernel_launch": 1.0}
        t = max(truth["p_g"] * 1e5, truth["p_l"] * r * 1e5) + 1e-5
        rows.append(Measurement(f"r{i}", {"r": r}, f, t))
    c = calibrate(m, rows)
    assert c.parameters["p_g"] == pytest.approx(1e-8, rel=0.05)
    assert c.parameters["p_l"] == pytest.approx(2e-9, rel=0.05)
    assert c.parameters["p_edge"] > 10  # steepened from its start
    # Without p_launch: the global accesses are as constant as the launch here, so a linear
    # fit could not tell their costs apart (calibrate refuses it).
    linear = calibrate(
        linear_model(m.output, {"p_g": "f_mem_access_global"}, {"p_l": "f_mem_access_local"}, {}),
        rows,
    )
    assert c.residual < linear.residual  # the hidden on-chip cost is what the linear form misses


def test_negative_costs_are_reported():
    m = Model("f_x", "p_a * f_op_float32_add + p_b * f_op_float32_mul")
    rows = [
        Measurement(f"k{i}", {}, {"f_op_float32_add": a, "f_op_float32_mul": b}, t)
        for i, (a, b, t) in enumerate([(1, 1, 1), (2, 1, 1.5), (1, 2, 0.5), (3, 3, 3)])
    ]
    c = calibrate(m, rows)
    assert not c.nonnegative and c.negative == ("p_b",)


def test_calibration_refuses_too_few_or_incomplete_measurements():
    m = Model("f_x", "p_a * f_op_float32_add + p_b * f_op_float32_mul")
    row = Measurement("k", {}, {"f_op_float32_add": 1.0, "f_op_float32_mul": 2.0}, 1.0)
    with pytest.raises(ModelError, match="cannot fix 2 parameters"):
        calibrate(m, [row])
    with pytest.raises(ModelError, match="no value for f_op_float32_mul"):
        calibrate(m, [row, Measurement("j", {}, {"f_op_float32_add": 1.0}, 1.0)])


def test_a_calibration_that_does_not_converge_says_so():
    m = Model("f_x", "p_a * exp(p_b * f_op_float32_add)")
    rows = [Measurement(f"k{i}", {}, {"f_op_float32_add": i + 1.0}, 1.0 + i) for i in range(5)]
    with pytest.raises(ModelError, match=r"did not converge .*; give measurements"):
        calibrate(m, rows, scale=False, max_evaluations=2)
    big = [Measurement(f"k{i}", {}, {"f_op_float32_add": 1e3 * (i + 1)}, 1.0) for i in range(3)]
    with pytest.raises(ModelError, match="not finite at its starting values"):
        calibrate(m, big, scale=False)


def test_parameters_the_measurements_cannot_tell_apart_are_refused():
    # Two costs of one feature: least squares fixes only their sum, and Levenberg-Marquardt
    # stopped with the others at their start (residual 1e6) and wrote it as a calibration.
    m = Model("f_x", "p_a * f_op_float32_add + p_b * f_op_float32_add + p_c * f_op_float32_mul")
    rows = [
        Measurement(f"k{i}", {}, {"f_op_float32_add": a, "f_op_float32_mul": b}, a + 2 * b)
        for i, (a, b) in enumerate([(1, 1), (2, 1), (1, 3), (4, 2)])
    ]
    with pytest.raises(ModelError, match=r"did not converge \(p_a, p_b cannot be told apart"):
        calibrate(m, rows)


def test_a_fit_worse_than_predicting_zero_is_refused():
    # This model cannot go below 0.01 s; every measurement is at most 4 ms.
    m = Model("f_x", "p_a * p_a * f_op_float32_add + 0.01")
    rows = [
        Measurement(f"k{i}", {}, {"f_op_float32_add": i + 1.0}, 1e-3 * (i + 1)) for i in range(4)
    ]
    with pytest.raises(
        ModelError, match=r"did not converge \(its residual .* worse than predicting 0"
    ):
        calibrate(m, rows)


def test_models_and_calibrations_round_trip_through_files(tmp_path):
    m = overlap_model(
        "f_cl_wall_time_a_b", {"p_g": "f_mem_access_global"}, {"p_l": "f_mem_access_local"}, {}
    )
    m.save(tmp_path / "m.json")
    assert Model.load(tmp_path / "m.json") == m
    rows = [
        Measurement(
            f"k{i}",
            {},
            {"f_mem_access_global": g, "f_mem_access_local": loc},
            max(g, 3 * loc) * 1e-9,
        )
        for i, (g, loc) in enumerate([(1e5, 1e4), (2e5, 1e4), (1e5, 1e5), (3e5, 2e5), (1e5, 5e4)])
    ]
    c = calibrate(m, rows, device="dev")
    c.save(tmp_path / "c.json")
    again = Calibration.load(tmp_path / "c.json")
    assert again == c
    p = predict(again, {"f_mem_access_global": 1e5, "f_mem_access_local": 2e4})
    assert p.value == pytest.approx(
        float(m.evaluate(c.parameters, {"f_mem_access_global": 1e5, "f_mem_access_local": 2e4}))
    )
    assert sum(p.terms.values()) == pytest.approx(1.0)
    (tmp_path / "number.json").write_text(
        '{"format": "perfport-model/1", "output": "f_t", "expression": 5}'
    )
    with pytest.raises(ModelError, match='"expression" must be a string'):
        Model.load(tmp_path / "number.json")


def test_a_missing_model_or_calibration_file_is_one_line(tmp_path):
    """Calibration.load("missing.json") was a raw FileNotFoundError."""
    missing = tmp_path / "missing.json"
    with pytest.raises(ModelError, match=r"cannot be read \(No such file or directory\); give"):
        Calibration.load(missing)
    with pytest.raises(ModelError, match=r"cannot be read \(No such file or directory\); give"):
        Model.load(missing)
    with pytest.raises(ModelError, match=r"cannot be read \(Is a directory\)"):
        Calibration.load(tmp_path)
    (tmp_path / "bad.json").write_text('{"format": "perfport-model/1"}')
    with pytest.raises(ModelError, match="missing or bad field"):
        Model.load(tmp_path / "bad.json")


def test_the_overlap_step_is_relative_so_scaled_calibration_fits_the_predicting_model():
    # Calibration divides features by the measured time; prediction does not. The two agree
    # only if the model is homogeneous in its features, as the relative step makes it.
    m = overlap_model(
        "f_cl_wall_time_pocl_cpu",
        {"p_g": "f_mem_access_global"},
        {"p_l": "f_mem_access_local"},
        {"p_launch": "f_sync_kernel_launch"},
    )
    params = {"p_g": 1e-8, "p_l": 2e-9, "p_launch": 1e-5, "p_edge": 10.0}
    f = {"f_mem_access_global": 1e5, "f_mem_access_local": 4e5, "f_sync_kernel_launch": 1.0}
    t = float(m.evaluate(params, f))
    for scale in (1e-3, 1e3):
        scaled = {k: v * scale for k, v in f.items()}
        assert float(m.evaluate(params, scaled)) == pytest.approx(t * scale, rel=1e-9)
    empty = {"f_mem_access_global": 0.0, "f_mem_access_local": 0.0, "f_sync_kernel_launch": 1.0}
    assert float(m.evaluate(params, empty)) == pytest.approx(1e-5)


def test_relative_error_calibration_recovers_a_product_of_features():
    # the paper's barrier term: a cost per barrier per work-group, a product of two features;
    # relative error must divide the residual by the output, not each feature (which would
    # divide the product twice)
    m = Model("f_x", "p_launch * f_sync_kernel_launch + "
              "p_barrier * f_sync_barrier_local * f_thread_groups")  # fmt: skip
    true = {"p_launch": 5e-6, "p_barrier": 6e-11}
    rows = []
    for i, (b, g) in enumerate([(1024, 16896), (2048, 33792), (4096, 67584), (16, 16), (64, 256)]):
        f = {"f_sync_kernel_launch": 1.0, "f_sync_barrier_local": float(b),
             "f_thread_groups": float(g)}  # fmt: skip
        rows.append(Measurement(f"k{i}", {}, f, float(m.evaluate(true, f))))
    c = calibrate(m, rows)
    assert c.residual < 1e-9
    for name, value in true.items():
        assert c.parameters[name] == pytest.approx(value, rel=1e-6)


def _calibration(expression: str, parameters: dict[str, float]) -> Calibration:
    return Calibration(model=Model("f_t", expression), device="dev", parameters=parameters,
                       residual=0.0, residuals=(), n_measurements=0, nonnegative=True,
                       negative=(), scaled=True, iterations=0)  # fmt: skip


def test_a_term_written_twice_keeps_its_whole_share():
    # The shares were keyed by the term's text, so the second p_g * f_thread_groups replaced
    # the first: the shares summed to 2/3, not 1.
    cal = _calibration("p_g * f_thread_groups + p_l * f_sync_kernel_launch + p_g*f_thread_groups",
                       {"p_g": 1.0, "p_l": 1.0})  # fmt: skip
    p = predict(cal, {"f_thread_groups": 1.0, "f_sync_kernel_launch": 1.0})
    assert p.value == 3.0
    assert p.terms == {"p_g * f_thread_groups": pytest.approx(2 / 3),
                       "p_l * f_sync_kernel_launch": pytest.approx(1 / 3)}  # fmt: skip


def test_a_subtracted_term_is_a_term_of_its_own_with_a_negative_share():
    # a + b - c was one term, at 100%.
    m = Model("f_t", "p_a * f_thread_groups + p_b * f_sync_kernel_launch - p_c * f_op_float32_add")
    assert m.terms() == ("p_a * f_thread_groups", "p_b * f_sync_kernel_launch",
                         "-(p_c * f_op_float32_add)")  # fmt: skip
    assert Model("f_t", "p_a * f_thread_groups - (p_b - p_c) * f_sync_kernel_launch").terms() == (
        "p_a * f_thread_groups", "-((p_b - p_c) * f_sync_kernel_launch)")  # fmt: skip
    assert Model("f_t", "-p_a * f_thread_groups - -p_b").terms() == ("-p_a * f_thread_groups",
                                                                      "p_b")  # fmt: skip
    cal = _calibration(m.expression, {"p_a": 2.0, "p_b": 1.0, "p_c": 1.0})
    p = predict(cal, {"f_thread_groups": 1.0, "f_sync_kernel_launch": 1.0, "f_op_float32_add": 1.0})
    assert p.value == 2.0
    assert list(p.terms.values()) == pytest.approx([1.0, 0.5, -0.5])
    assert sum(p.terms.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("start", [1e300, 1e200])
def test_a_fit_from_huge_starting_values_warns_nothing(start):
    # scipy's 'overflow encountered in dot' (six lines of RuntimeWarning) came before the
    # one-line error, and leaked from a fit that succeeded.
    import warnings

    m = Model("f_x", "p_a * f_thread_groups + p_b * f_sync_kernel_launch",
              initial={"p_a": start, "p_b": -start})  # fmt: skip
    rows = [Measurement(f"k{i}", {}, {"f_thread_groups": g, "f_sync_kernel_launch": 1.0},
                        1e-5 + 1e-7 * g) for i, g in enumerate((16, 64, 256, 1024))]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        try:
            calibration = calibrate(m, rows)
        except ModelError as exc:
            assert "\n" not in str(exc) and "did not converge" in str(exc)
        else:
            assert calibration.parameters["p_a"] == pytest.approx(1e-7, rel=1e-3)


@pytest.mark.parametrize("allow_uninformed", [False, True])  # calibrate's, evaluate's
def test_a_model_without_parameters_says_so(allow_uninformed):
    # It said 'no parameter of the model is informed by the measurements; measure kernels
    # with its features': the measurements were not the problem.
    m = Model("f_t", "1e-6 * f_thread_groups")
    rows = [
        Measurement(f"k{i}", {}, {"f_thread_groups": g}, 1e-6 * g) for i, g in enumerate((1, 2))
    ]
    with pytest.raises(ModelError, match=r"no p_ parameter to fit; write each cost as a p_ "):
        calibrate(m, rows, allow_uninformed=allow_uninformed)


@pytest.mark.parametrize("terms", [99, 400, 1000])
def test_a_flat_sum_of_hundreds_of_terms_is_a_model(terms):
    # 99 terms were refused as 'nested more than 100 levels deep': the parser counted each
    # '+' of a flat sum as a level.
    expression = " + ".join(
        f"p_{i} * f_op_float32_add" if i % 3 else f"- p_{i} * f_thread_groups" for i in range(terms)
    )
    m = Model("f_t", expression)
    assert len(m.parameters) == terms and len(m.terms()) == terms
    params = {p: 1.0 for p in m.parameters}
    features = {"f_op_float32_add": 2.0, "f_thread_groups": 1.0}
    negative = len(range(0, terms, 3))
    assert float(m.evaluate(params, features)) == 2.0 * (terms - negative) - negative
    jac = m.jacobian(params, features)
    assert sorted(set(jac[0])) == [-1.0, 2.0]  # each parameter's own feature, its own sign
    p = predict(_calibration(expression, params), features)
    assert sum(p.terms.values()) == pytest.approx(1.0)


def test_a_sum_too_large_names_the_limit_and_deep_nesting_is_still_refused():
    with pytest.raises(ModelError, match=r"too large \(over 10000 syntax nodes"):
        Model("f_t", " + ".join(f"p_{i} * f_thread_groups" for i in range(2000)))
    with pytest.raises(ModelError, match="nested more than 100 levels deep"):
        Model("f_t", "tanh(" * 120 + "p_a * f_thread_groups" + ")" * 120)
