"""A model that divides by a feature that is 0 for a kernel (or takes log or sqrt outside
their domain) is a one-line error naming the term, the feature and its value, never a
ZeroDivisionError, and never called an overflow; model-guided search ranks such a
configuration last, with a note, and still runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_support import LOOPY

from perfport.cli import main
from perfport.model import Measurement, Model
from perfport.model.errors import ModelError

pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

DIV = "p_a * f_thread_groups / f_sync_barrier_local"
FEATURES = {"f_thread_groups": 16.0, "f_sync_barrier_local": 0.0}


def _calibration(expression: str, features: dict | None = None, device: str = "dev"):
    from perfport.model.calibrate import Calibration

    model = Model("f_cl_wall_time", expression, definitions=features or {})
    return Calibration(model=model, device=device, parameters=dict.fromkeys(model.parameters, 1e-6),
                       residual=0.0, residuals=(), n_measurements=0, nonnegative=True,
                       negative=(), scaled=True, iterations=0)  # fmt: skip


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        (
            DIV,
            "f_sync_barrier_local is 0 for this kernel: p_a * f_thread_groups / "
            "f_sync_barrier_local divides by it",
        ),
        (
            "p_a * f_thread_groups * f_sync_barrier_local ** -1",
            "f_sync_barrier_local is 0 for this kernel: f_sync_barrier_local ** (-1) raises it "
            "to a negative power (a division by zero)",
        ),
        (
            "p_a * log(f_sync_barrier_local) + p_b * f_thread_groups",
            "f_sync_barrier_local is 0 for this kernel: log(f_sync_barrier_local) is a domain "
            "error",
        ),
        (
            "p_a * sqrt(f_thread_groups - 1e9)",
            "f_thread_groups - 1e+09 is -1e+09 for this kernel: sqrt(f_thread_groups - 1e+09) is "
            "a domain error",
        ),
    ],
    ids=["div", "pow", "log", "sqrt"],
)
def test_predict_names_the_division_or_domain_error(expression, says):
    from perfport.model.calibrate import predict

    with pytest.raises(ModelError) as caught:
        predict(_calibration(expression), FEATURES)
    message = str(caught.value)
    assert message.startswith("cannot predict: ") and says in message
    assert "overflows" not in message and "\n" not in message


def test_an_overflow_is_still_called_one():
    from perfport.model.calibrate import predict

    with pytest.raises(ModelError, match="overflows"):
        predict(_calibration("p_a * exp(f_thread_groups * 100)"), FEATURES)


def test_calibrate_names_the_measurement_whose_feature_is_zero():
    from perfport.model.calibrate import calibrate

    model = Model("f_cl_wall_time", f"p_b * f_thread_groups + {DIV}")
    rows = [({"f_thread_groups": 8.0, "f_sync_barrier_local": 1.0}, 1e-5),
            ({"f_thread_groups": 16.0, "f_sync_barrier_local": 0.0}, 2e-5),
            ({"f_thread_groups": 32.0, "f_sync_barrier_local": 2.0}, 3e-5)]  # fmt: skip
    data = [Measurement(f"mk-{i}", {"n": i}, f, t) for i, (f, t) in enumerate(rows)]
    with pytest.raises(ModelError) as caught:
        calibrate(model, data)
    message = str(caught.value)
    assert "at mk-1 n=1" in message and "f_sync_barrier_local is 0" in message
    assert "starting values" not in message


def test_a_ranker_ranks_an_unpredictable_configuration_last_and_says_so_once():
    from perfport.model.guided import ModelRanker
    from perfport.space import Space
    from perfport.strategies.model_guided import ModelGuided

    told: list[tuple[int, str]] = []
    features = [FEATURES, {**FEATURES, "f_sync_barrier_local": 4.0}]
    ranker = ModelRanker(Model("f_cl_wall_time", DIV), [], features,
                         calibration=_calibration(DIV), unpredicted=lambda i, why: told.append((i, why)))  # fmt: skip
    predicted = ranker.predict()
    assert np.isnan(predicted[0]) and predicted[1] == pytest.approx(4e-6)
    ranker.predict()
    assert [i for i, _ in told] == [0] and "f_sync_barrier_local is 0" in told[0][1]
    from perfport._core.spec import Param

    strategy = ModelGuided(Space([Param("x", [0, 1])]), ranker=ranker)
    assert strategy.ask() == 1  # the one it can predict first


SPACE = """
import loopy as lp
import numpy as np

params = {"wg": [16, 32]}
sizes = {"n": 256}


def program(config):
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "y[i] = 2 * x[i]",
                         [lp.GlobalArg("x,y", np.float32, shape=("n",)),
                          lp.ValueArg("n", np.int32)],
                         assumptions="n >= 1", lang_version=(2018, 2))
    return lp.split_iname(knl, "i", config["wg"], outer_tag="g.0", inner_tag="l.0")


def reference(problem, inputs):
    return {"y": 2 * inputs["x"]}
"""


@pytest.mark.parametrize(
    ("expression", "features"),
    [
        (DIV, None),
        (
            "p_a * f_thread_groups + p_b * f_ratio",
            {"f_ratio": "f_mem_access_global_float32_load / f_sync_barrier_local"},
        ),
    ],
    ids=["model", "feature"],
)
def test_model_guided_tunes_with_a_model_dividing_by_a_zero_feature(
    tmp_path, capsys, cpu, expression, features
):
    pytest.importorskip("loopy", reason=LOOPY)
    kernel = tmp_path / "scale.py"
    kernel.write_text(SPACE)
    cal = tmp_path / "cal.json"
    _calibration(expression, features, cpu.name).save(cal)
    argv = ["tune", str(kernel), "--strategy", "model_guided", "--calibration", str(cal),
            "--db", str(tmp_path / "r.db"), "--confirm", "0", "--json"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["outcomes"]["ok"] == 2
    assert "cannot be predicted, ranked last (" in captured.err  # said, not only done
    # predict says why in one line, exit 2
    argv = ["model", "predict", str(cal), str(kernel), "--config", "wg=16", "--problem", "n=256"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "f_sync_barrier_local is 0 for this kernel" in err and "\n" not in err
    if features:
        assert err.startswith("perfport: error: feature f_ratio: ")
