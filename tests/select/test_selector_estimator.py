"""``Selector`` is a scikit-learn-style estimator: its arguments stored as given (get_params,
set_params, sklearn.base.clone), its classifier's name checked at fit, NotFittedError before
fit, and one-line SelectErrors (still ValueErrors) for unknown names."""

from __future__ import annotations

import numpy as np
import pytest
from test_selection import A, B, two_regimes

from perfport._core import PerfportError
from perfport.select import (
    Classifier,
    SelectError,
    Selector,
    UnknownNameError,
    evaluate,
    fit_selector,
)

base = pytest.importorskip("sklearn.base", reason="scikit-learn (the models extra)")
exceptions = pytest.importorskip("sklearn.exceptions")


@pytest.mark.parametrize("classifier", ["decision_tree_b", Classifier.RBF_SVM])
def test_clone_copies_the_arguments_as_given_and_get_params_round_trips(classifier):
    selector = Selector(classifier, seed=4)
    assert selector.get_params() == {"classifier": classifier, "seed": 4}
    copy = base.clone(selector)
    assert type(copy) is Selector and copy is not selector
    assert copy.get_params() == selector.get_params() == Selector(**copy.get_params()).get_params()
    assert selector.set_params(seed=5) is selector and selector.seed == 5


@pytest.mark.parametrize("classifier", ["decision_tree_a", "decision_tree_regret_derived", "3nn"])
def test_a_clone_of_a_fitted_selector_is_unfitted_and_refits_to_the_same_answers(classifier):
    t = two_regimes()
    fitted = fit_selector(t, [A, B], classifier, seed=1)
    copy = base.clone(fitted)
    assert not any(k.endswith("_") for k in vars(copy))
    with pytest.raises(exceptions.NotFittedError):
        copy.predict(t.problems)
    chosen = t.times[:, [A, B]]
    copy.fit(t.problems, np.nanargmin(chosen, axis=1), t.problem_names, times=chosen)
    assert copy.predict(t.problems).tolist() == fitted.predict(t.problems).tolist()
    assert copy.classifier_ is fitted.classifier_ is Classifier(classifier)


def test_predict_before_fit_is_a_one_line_not_fitted_error():
    with pytest.raises(exceptions.NotFittedError) as caught:
        Selector().predict(np.ones((2, 3)))
    assert isinstance(caught.value, PerfportError)  # the CLI's one-line errors
    assert str(caught.value) == (
        "this Selector is not fitted yet (it has no n_features_in_); call fit first"
    )


def test_unknown_classifier_names_are_one_line_select_errors_that_stay_value_errors():
    t = two_regimes()
    selector = Selector("nope")  # stored as given, as scikit-learn's constructors do
    assert selector.classifier == "nope"
    with pytest.raises(UnknownNameError, match="unknown classifier 'nope'; choose from") as caught:
        selector.fit(t.problems, np.zeros(t.n_problems, dtype=int))
    assert isinstance(caught.value, SelectError) and isinstance(caught.value, ValueError)
    assert "\n" not in str(caught.value)
    with pytest.raises(UnknownNameError, match="unknown classifier 'nope'"):
        evaluate(t, ["relative"], ["top_n"], ["nope"], ks=[2])
    with pytest.raises(UnknownNameError, match="unknown pruning 'nope'"):
        evaluate(t, ["relative"], ["nope"], ["decision_tree_a"], ks=[2])
