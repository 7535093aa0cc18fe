"""Questions answered together (``propose_many``, ``predict_wg_many``) get exactly the answers
they get one at a time: random questions, novel ones, refused sizes, failing ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfport.wg import WgQuestion, load_dataset, predict_wg, predict_wg_many
from perfport.wg.predictors.classifier import WgClassifier
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.k_nearest_neighbours import WgPerformanceKnn
from perfport.wg.predictors.regressor import WgRegressor

SHIPPED = Path(__file__).parents[2] / "src" / "perfport" / "datasets" / "wg" / "stencils.npz"


@pytest.fixture(scope="module")
def shipped():
    return load_dataset(SHIPPED)


PREDICTORS = {
    "forest+novel": lambda: WgPerformanceForest(trees=20, fallback=True, novelty=0.05),
    "forest+novel_cpu": lambda: WgPerformanceForest(
        trees=20, fallback=True, novelty=0.05, cpu_class=True
    ),
    "forest": lambda: WgPerformanceForest(trees=20),
    "knn+fixed": lambda: WgPerformanceKnn(fallback=True),
}


def random_questions(data, rng, n):
    """Training scenarios, perturbed ones and far-away ones (novel kernels), with random
    limits and refused columns (now and then every column, which leaves the baseline)."""
    rows = rng.integers(len(data), size=n)
    x = data.features[rows].astype(np.float64)
    scale = rng.choice([1.0, 1.0, 1.3, 25.0], size=(n, 1))
    x = x * np.where(rng.random(x.shape) < 0.3, scale, 1.0)
    max_wg = rng.choice([64, 256, 1024, 4096], size=n).tolist()
    columns = len(data.sizes)
    refused = [
        set(range(columns)) if rng.random() < 0.05
        else set(rng.choice(columns, size=rng.integers(0, 6), replace=False).tolist())
        for _ in range(n)
    ]  # fmt: skip
    return x, max_wg, refused


@pytest.mark.parametrize("name", PREDICTORS)
def test_propose_many_answers_as_propose_does(shipped, name):
    predictor = PREDICTORS[name]().fit(shipped)
    rng = np.random.default_rng(7)
    for batch in (1, 2, 17, 64):
        x, max_wg, refused = random_questions(shipped, rng, batch)
        many = predictor.propose_many(x, max_wg, refused)
        one = [predictor.propose(x[i], max_wg[i], refused[i]) for i in range(batch)]
        assert many == one
        novelty = predictor.novelty_
        if novelty is not None:  # the explanations kept by the batch are the row's own
            kept = [novelty.explain(row) for row in x]
            assert kept == [novelty._explain(row) for row in x]


def test_forest_neighbours_many_are_the_rows_own(shipped):
    forest = PREDICTORS["forest"]().fit(shipped)
    x, _, _ = random_questions(shipped, np.random.default_rng(3), 40)
    for (rows, weights), row in zip(forest.neighbours_many(x), x, strict=True):
        alone = forest.neighbours(row)
        assert np.array_equal(rows, alone[0]) and np.array_equal(weights, alone[1])
    assert forest.neighbours_many(x[:0]) == []


def _same(a, b):
    assert (a.wg, a.method, a.refused_known, a.novel, a.novelty) == (
        b.wg, b.method, b.refused_known, b.novel, b.novelty,
    )  # fmt: skip


def test_predict_wg_many_answers_as_predict_wg_with_failures_in_place(daemon_model, cpu):
    from perfport import builtin
    from perfport.wg import load_model

    model = load_model(daemon_model)
    rng = np.random.default_rng(11)
    every_size = frozenset((int(c), int(r)) for c, r in model.sizes)
    questions = []
    for i in range(24):
        name = ["heat", "gaussian", "sobel"][i % 3]
        problem = {"width": int(rng.integers(16, 4096)), "height": int(rng.integers(16, 4096))}
        picked = rng.choice(len(model.sizes), size=rng.integers(0, 4), replace=False)
        refused = frozenset((int(model.sizes[j][0]), int(model.sizes[j][1])) for j in picked)
        questions.append(WgQuestion(builtin(name), problem, cpu, refused))
    # Every size refused: that question fails, alone.
    questions.insert(5, WgQuestion(builtin("heat"), {"width": 64, "height": 64}, cpu, every_size))
    answers = predict_wg_many(model, questions)
    assert len(answers) == len(questions)
    for q, answer in zip(questions, answers, strict=True):
        if q.refused == every_size:
            assert isinstance(answer, Exception) and "none of the model's sizes" in str(answer)
            continue
        assert not isinstance(answer, Exception)
        _same(answer, predict_wg(model, q.spec, q.problem, q.device, q.refused))
    assert predict_wg_many(model, []) == []


@pytest.mark.parametrize(
    "make",
    [
        lambda: WgClassifier("decision_tree", fallback="nearest_neighbour"),
        lambda: WgClassifier("decision_tree", fallback="baseline"),
        lambda: WgClassifier("decision_tree", fallback="random"),
        lambda: WgRegressor("speedup", trees=10),
        lambda: WgRegressor("performance", trees=10),
        lambda: WgPerformanceKnn(fallback=True),
    ],
    ids=["tree+nearest", "tree+baseline", "tree+random", "speedup", "performance", "knn+fixed"],
)
def test_the_answer_and_the_models_own_choice_come_from_one_prediction(shipped, make):
    """propose_own is (propose with the limits, propose with every size allowed); the
    classifiers and regressors computed it with two predictions each (the daemon's latency)."""
    from perfport.wg.predictors.base import ANY_SIZE

    predictor = make()
    # A regressor learns from a row per scenario and size (717 x 229 on the shipped data): a
    # sixth of the scenarios is enough to compare its two paths (asked the same questions).
    every = 6 if isinstance(predictor, WgRegressor) else 1
    predictor.fit(shipped.subset(np.arange(0, len(shipped), every)))
    x, max_wg, refused = random_questions(shipped, np.random.default_rng(3), 24)
    own = predictor.propose_many_own(x, max_wg, refused)
    expected = [
        (predictor.propose(x[i], max_wg[i], refused[i]), predictor.propose(x[i], ANY_SIZE, set()))
        for i in range(len(x))
    ]
    assert own == expected


def test_a_classifier_predicts_once_for_the_answer_and_its_own_choice(shipped):
    predictor = WgClassifier("decision_tree").fit(shipped)
    calls = []
    model = predictor.model_

    class Counted:
        def predict(self, rows):
            calls.append(len(rows))
            return model.predict(rows)

    predictor.model_ = Counted()
    x, max_wg, refused = random_questions(shipped, np.random.default_rng(5), 1)
    predictor.propose_own(x[0], max_wg[0], refused[0])
    assert calls == [1]
