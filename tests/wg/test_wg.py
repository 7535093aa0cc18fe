"""Work-group-size predictors and their evaluation, on a synthetic landscape and on Cummins'
pilot data."""

import json

import numpy as np
import pytest

from conftest import SHARED, needs_shared
from perfport.cli import main
from perfport.wg import (
    METHODS,
    WgClassifier,
    WgDataset,
    WgRegressor,
    evaluate,
    folds,
    load_cummins_csv,
    make_predictor,
    reference_baseline,
    regret_weights,
    save_dataset,
)

GRID = np.array([(c, r) for c in (4, 8, 16, 32, 64) for r in (1, 2, 4, 8)])


def landscape(n: int = 60, seed: int = 0) -> WgDataset:
    """Scenarios whose best wc grows with a feature, on two devices, with refusals."""
    rng = np.random.default_rng(seed)
    width = rng.choice([512, 1024, 2048, 4096], size=n)
    device = rng.integers(0, 2, size=n)
    max_wg = np.where(device == 0, 256, 128)
    best_c = np.where(width >= 2048, 64, 16)
    t = (
        1.0
        + np.abs(np.log2(GRID[None, :, 0] / best_c[:, None]))
        + 0.3 * np.abs(np.log2(GRID[None, :, 1] / 4))
    )
    t = t * width[:, None] / 1024.0
    area = GRID[:, 0] * GRID[:, 1]
    t[area[None, :] > max_wg[:, None]] = np.nan
    t[(device == 1)[:, None] & (GRID[None, :, 1] == 8)] = np.nan  # refused on device 1
    features = np.column_stack([width, device, max_wg]).astype(float)
    return WgDataset(
        GRID, t, max_wg, features, ("width", "device", "max_wg"), device.astype(str),
        np.array([f"k{i % 3}" for i in range(n)]), width.astype(str), np.arange(n) % 4 != 0,
    )  # fmt: skip


def test_predictors_never_propose_refused_or_too_large():
    data = landscape()
    for predictor in (WgClassifier("decision_tree", "nearest_neighbour"), WgClassifier("naive_bayes", "random"),
                      WgClassifier("logistic", "baseline"), WgRegressor("speedup", trees=10)):  # fmt: skip
        predictor.fit(data)
        refused = {3, 7}
        for s in range(10):
            w = predictor.propose(data.features[s], int(data.max_wg[s]), refused)
            assert w not in refused and GRID[w].prod() <= data.max_wg[s], predictor.name


@pytest.mark.parametrize(
    "method",
    [
        "decision_tree+nearest_neighbour",
        "speedup_regressor",
        "performance_regressor",
        "svm+baseline",
    ],
)
def test_learning_beats_the_static_baseline(method):
    data = landscape()
    (result,) = evaluate(data, [method], ["10-fold"])
    assert result.performance > 0.9 and result.speedup_over_baseline > 1.0
    assert result.scenarios == len(data) and 0 <= result.refused <= 1 and result.validity == 1.0


def test_performance_per_device_combines_into_the_overall(tmp_path, capsys):
    data = landscape()
    (result,) = evaluate(data, ["decision_tree+nearest_neighbour"], ["kernel"])
    devices = [d for d, _, _ in result.per_device]
    assert devices == ["0", "1"] and sum(n for _, _, n in result.per_device) == len(data)
    pooled = np.exp(sum(n * np.log(p) for _, p, n in result.per_device) / len(data))
    assert pooled == pytest.approx(result.performance)
    assert "per_device" not in result.to_json()  # the contract's keys, unless asked for
    counts = {d: n for d, _, n in result.per_device}
    assert result.to_json(per_device=True)["per_device"]["1"]["scenarios"] == counts["1"]
    kernels = result.to_json(per_device=True)["per_kernel"]  # the report's per-kernel bars
    assert len(kernels) > 1 and sum(k["scenarios"] for k in kernels.values()) == len(data)
    pooled = np.exp(sum(k["scenarios"] * np.log(k["performance"]) for k in kernels.values()))
    assert pooled ** (1 / len(data)) == pytest.approx(result.performance)

    save_dataset(data, tmp_path / "wg.npz")
    argv = ["wg", "evaluate", "--data", str(tmp_path / "wg.npz"), "--methods",
            "decision_tree+nearest_neighbour", "--partitions", "kernel", "--by-device"]  # fmt: skip
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert row["per_device"]["0"]["performance"] == pytest.approx(result.per_device[0][1])
    assert main(argv) == 0 and "Performance per device set-up" in capsys.readouterr().out


def test_arithmetic_performance_is_the_mean_of_each_scenarios_fraction():
    from perfport.wg.evaluate import _choose
    from perfport.wg.predictors import make_predictor

    data = landscape()
    (result,) = evaluate(data, ["decision_tree+nearest_neighbour"], ["device"])
    fractions = []
    for train, test in folds(data, "device"):
        predictor = make_predictor("decision_tree+nearest_neighbour", 0).fit(data.subset(train))
        for s in test:
            w, _ = _choose(predictor, data, s)
            fractions.append(np.nanmin(data.runtimes[s]) / data.runtimes[s, w])
    assert result.performance_arithmetic == pytest.approx(np.mean(fractions))
    assert result.performance == pytest.approx(np.exp(np.mean(np.log(fractions))))
    assert result.performance < result.performance_arithmetic <= 1.0
    assert result.to_json()["performance_arithmetic"] == result.performance_arithmetic


def test_evaluation_reports_a_bootstrap_interval_of_performance():
    data = landscape()
    (result,) = evaluate(data, ["decision_tree+nearest_neighbour"], ["device"], seed=2)
    low, high = result.performance_ci95
    assert low < result.performance < high
    assert result.to_json()["performance_ci95"] == [low, high]


def test_partitions():
    data = landscape()
    tens = list(folds(data, "10-fold"))
    assert len(tens) == 10 and sorted(np.concatenate([t for _, t in tens]).tolist()) == list(
        range(len(data))
    )
    assert len(list(folds(data, "device"))) == 2 and len(list(folds(data, "synthetic-real"))) == 1
    for train, test in folds(data, "kernel"):
        assert not set(data.kernel[train]) & set(data.kernel[test])
    base = reference_baseline(data)
    assert data.legal[:, base].all()  # always runs ...
    always = np.flatnonzero(data.legal.all(0))
    perf = np.log(np.nanmin(data.runtimes, axis=1)[:, None] / data.runtimes[:, always]).mean(0)
    assert base == always[int(np.argmax(perf))]  # ... and is the best of those


@needs_shared
def test_cummins_pilot_data():
    data = load_cummins_csv(SHARED / "cummins-omnitune-wgsize" / "simplebig_runtimes.csv")
    assert (
        len(data) == 226
        and data.runtimes.shape[1] == 169
        and int(np.isfinite(data.runtimes).sum()) == 13392
    )
    assert data.sizes[reference_baseline(data)].tolist() == [
        4,
        4,
    ]  # nothing always ran: the paper's w(4x4)
    (result,) = evaluate(data, ["decision_tree+nearest_neighbour"], ["dataset"])
    assert result.performance > 0.7 and result.speedup_over_baseline > 2.0


@needs_shared
def test_cli_evaluate_json(capsys, monkeypatch):
    monkeypatch.setenv("PERFPORT_SHARED_DATA", str(SHARED))
    assert main(["wg", "evaluate", "--data", "cummins-pilot", "--methods",
                 "decision_tree+nearest_neighbour", "--partitions", "device", "--json"]) == 0  # fmt: skip
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert {"method", "partition", "performance", "speedup_over_baseline", "speedup_over_expert", "accuracy",
            "validity", "refused", "predict_ms"} <= set(row)  # fmt: skip
    assert row["partition"] == "device"


def test_a_bare_string_where_a_list_goes_is_refused_naming_it():
    """evaluate(d, "performance_knn", ...) said 'unknown method p', a string taken apart."""
    from perfport._core import PerfportError

    data = landscape(20)
    with pytest.raises(
        PerfportError, match=r"methods must be a list, e\.g\. \['performance_knn'\]"
    ):
        evaluate(data, "performance_knn", ["10-fold"])  # type: ignore[arg-type]
    with pytest.raises(PerfportError, match=r"partitions must be a list, e\.g\. \['kernel'\]"):
        evaluate(data, ["decision_tree+nearest_neighbour"], "kernel")  # type: ignore[arg-type]


def test_method_names():
    assert (
        "random_forest+nearest_neighbour" in METHODS
        and "speedup_regressor" in METHODS
        and len(METHODS) == 39
    )
    for name in ("logistic_weighted+baseline", "svm+random"):
        assert name in METHODS and make_predictor(name).name == name


def two_kinds(n: int = 100) -> WgDataset:
    """Scenarios that matter (the best of two sizes wins by 2x, by a feature) among more that
    do not (every size within 0.1%), whose nominal oracle is the other size."""
    grid = np.array([(8, 4), (32, 4)])
    x = np.linspace(0.0, 1.0, n)
    flat = np.arange(n) % 10 < 7
    best = (x >= 0.5).astype(int)
    best = np.where(flat, 1 - best, best)
    t = np.where(flat[:, None], 1.0, 2.0) * np.ones((1, 2))
    t[np.arange(n), best] = np.where(flat, 0.999, 1.0)
    return WgDataset(
        grid, t, np.full(n, 256), x[:, None], ("x",), np.full(n, "d"), np.full(n, "k"),
        np.full(n, "512"), np.ones(n, dtype=bool),
    )  # fmt: skip


def test_regret_weights_count_what_a_wrong_choice_costs():
    weight = regret_weights(two_kinds())
    assert weight.mean() == pytest.approx(1.0)
    flat = np.arange(100) % 10 < 7
    assert weight[~flat].min() > 100 * weight[flat].max()
    # A scenario where nothing ran gets only the floor, and the others stay finite.
    data = two_kinds()
    runtimes = data.runtimes.copy()
    runtimes[0] = np.nan
    none_ran = WgDataset(
        data.sizes, runtimes, data.max_wg, data.features, data.feature_names, data.device,
        data.kernel, data.dataset, data.synthetic,
    )  # fmt: skip
    weight = regret_weights(none_ran)
    assert np.isfinite(weight).all() and weight[0] < weight[1:].min()


@pytest.mark.parametrize("classifier", ["naive_bayes", "logistic", "svm"])
def test_a_weighted_classifier_follows_the_scenarios_that_matter(classifier):
    data = two_kinds()
    x = np.linspace(0.013, 0.987, 40)  # new scenarios, between the training ones
    right = {}
    for weighted in (False, True):
        model = WgClassifier(classifier, "baseline", weighted=weighted).fit(data)
        chosen = np.array([model.propose(np.array([v]), 256, set()) for v in x])
        right[weighted] = (chosen == (x >= 0.5)).mean()
    assert right[True] > 0.9 and right[False] < 0.7


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from perfport.wg import plots

    data = landscape()
    # Two folds, not ten: the plots draw whatever scenarios were predicted.
    results = evaluate(data, ["decision_tree+nearest_neighbour", "speedup_regressor"], ["device"])
    plots.oracle_heatmap(data, tmp_path / "a.png")
    plots.refused_ratio(data, tmp_path / "b.png")
    plots.expert_violins(results, tmp_path / "c.png")
    for name in "abc":
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("HEADER\n", "no scenarios, only a header"),
        ("HEADER\nh,dev,1,k,1,1,1,1,512,512,256,1.0\n", "line 2 does not have one cell"),
        ("HEADER\nh,dev,1,k,1,1,1,1,512,512,256,1.0,nan\n", "NaN or infinite"),
        ("HEADER\nh,dev,1,k,1,1,1,1,512,512,256,1.0,abc\n", "not a number"),
    ],
)
def test_a_malformed_cummins_csv_is_named(tmp_path, text, message):
    from perfport._core import SpecError

    header = "host,dev_name,dev_count,kern_checksum,north,south,east,west,data_width,data_height,max_wg_size,4x4,8x4"
    path = tmp_path / "runtimes.csv"
    path.write_text(text.replace("HEADER", header))
    with pytest.raises(SpecError, match=message):
        load_cummins_csv(path)
