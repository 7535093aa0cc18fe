"""The work-group-size predictors are scikit-learn-style estimators: settings stored as given
(get_params, set_params, sklearn.base.clone), checked at fit, NotFittedError before fit, and
one-line PerfportErrors (still ValueErrors) for unknown names."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import tiny_wg_dataset
from perfport._core import PerfportError
from perfport._core.errors import SettingsError
from perfport.wg import (
    METHODS,
    UnknownMethodError,
    WgClassifier,
    WgPerformanceForest,
    WgPerformanceKnn,
    WgRegressor,
    evaluate,
    make_predictor,
)

base = pytest.importorskip("sklearn.base", reason="scikit-learn (the models extra)")
exceptions = pytest.importorskip("sklearn.exceptions")

# One of each family, with settings other than the defaults.
MAKERS = {
    "knn": lambda: WgPerformanceKnn(k=3, fallback=True),
    "forest": lambda: WgPerformanceForest(trees=4, min_leaf=2, fallback=True, novelty=0.1),
    "classifier": lambda: WgClassifier("decision_tree", "baseline", seed=2),
    "regressor": lambda: WgRegressor("runtime", trees=4, seed=1),
}


def _data():
    rng = np.random.default_rng(3)
    names = [
        (d, k, str(s)) for d in ("cpu", "gpu") for k in ("synthetic", "heat") for s in (1, 2, 3)
    ]
    return tiny_wg_dataset(
        [[4, 4], [8, 4], [16, 4], [8, 8]],
        rng.uniform(1, 2, (len(names), 4)),
        names,
        rng.uniform(0, 1, (len(names), 2)),
    )


def _answers(predictor, data):
    return [predictor.propose(x, 1024, set()) for x in data.features]


@pytest.mark.parametrize("family", MAKERS)
def test_clone_copies_the_settings_and_get_params_round_trips(family):
    predictor = MAKERS[family]()
    params = predictor.get_params()
    copy = base.clone(predictor)
    assert type(copy) is type(predictor) and copy is not predictor
    assert copy.get_params() == params == type(predictor)(**params).get_params()
    assert copy.name == predictor.name
    assert repr(copy) == repr(predictor) and repr(copy).startswith(f"{type(copy).__name__}(")


def test_every_method_s_predictor_clones_to_the_same_method():
    for name in METHODS:
        predictor = make_predictor(name, seed=3)
        copy = base.clone(predictor)
        assert copy.name == name and copy.get_params() == predictor.get_params()


def test_set_params_changes_the_setting_and_the_method_name():
    knn = WgPerformanceKnn()
    assert knn.set_params(fallback=True, k=4) is knn
    assert (knn.k, knn.name) == (4, "performance_knn+fixed")
    with pytest.raises(SettingsError, match="no parameter kk; its parameters: device_weight"):
        knn.set_params(kk=1)
    with pytest.raises(ValueError):  # as scikit-learn's set_params raises
        knn.set_params(kk=1)


@pytest.mark.parametrize("family", MAKERS)
def test_a_clone_of_a_fitted_predictor_is_unfitted_and_refits_to_the_same_answers(family):
    data = _data()
    fitted = MAKERS[family]().fit(data)
    copy = base.clone(fitted)
    assert not any(k.endswith("_") for k in vars(copy))
    with pytest.raises(exceptions.NotFittedError):
        copy.propose(data.features[0], 1024, set())
    assert _answers(copy.fit(data), data) == _answers(fitted, data)


@pytest.mark.parametrize("family", MAKERS)
def test_propose_before_fit_is_a_one_line_not_fitted_error(family):
    predictor = MAKERS[family]()
    x = np.zeros(2)
    asks = [
        lambda: predictor.propose(x, 1024, set()),
        lambda: predictor.propose_own(x, 1024, set()),
        lambda: predictor.propose_many(x[None], [1024], [set()]),
    ]
    for ask in asks:
        with pytest.raises(exceptions.NotFittedError) as caught:
            ask()
        assert isinstance(caught.value, PerfportError)  # the CLI's one-line errors
        message = str(caught.value)
        assert "\n" not in message
        assert f"this {type(predictor).__name__} is not fitted yet" in message
        assert "call fit first" in message


def test_a_fitted_predictor_s_missing_attribute_is_a_plain_attribute_error():
    fitted = WgPerformanceKnn().fit(_data())
    assert getattr(fitted, "model_", None) is None
    with pytest.raises(AttributeError) as caught:
        _ = fitted.nothing_
    assert not isinstance(caught.value, exceptions.NotFittedError)


def test_set_params_on_a_fitted_forest_keeps_what_it_learnt():
    data = _data()
    forest = WgPerformanceForest(trees=3).fit(data)
    before = _answers(forest, data)
    forest.set_params(trees=7)  # takes effect at the next fit, as in scikit-learn
    assert _answers(forest, data) == before
    assert len(forest.fit(data).offsets_) == 7


def test_unknown_names_are_one_line_perfport_errors_that_stay_value_errors():
    with pytest.raises(UnknownMethodError, match="unknown method 'nope'; methods: ") as caught:
        make_predictor("nope")
    assert isinstance(caught.value, PerfportError) and isinstance(caught.value, ValueError)
    assert "\n" not in str(caught.value)
    data = _data()
    # The constructors store the names as given; fit checks them.
    with pytest.raises(UnknownMethodError, match="unknown classifier 'nope'; choose from"):
        WgClassifier(classifier="nope").fit(data)
    with pytest.raises(UnknownMethodError, match="unknown fallback 'nope'; choose from"):
        WgClassifier(fallback="nope").fit(data)
    with pytest.raises(UnknownMethodError, match="unknown target 'nope'; choose from"):
        WgRegressor(target="nope").fit(data)


def test_evaluate_refuses_an_unknown_method_before_fitting_any():
    heard = []
    with pytest.raises(UnknownMethodError, match="unknown method 'nope'"):
        evaluate(_data(), ["performance_knn", "nope"], ["device"], progress=heard.append)
    assert heard == []


def test_without_scikit_learn_not_fitted_is_still_a_perfport_value_and_attribute_error():
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import numpy as np\n"
        "from perfport._core import PerfportError\n"
        "from perfport.wg import WgPerformanceKnn\n"
        "try:\n"
        "    WgPerformanceKnn().propose(np.zeros(2), 1024, set())\n"
        "except PerfportError as e:\n"
        "    print(type(e).__name__, isinstance(e, ValueError), isinstance(e, AttributeError))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["NotFittedError", "True", "True"], done.stderr
