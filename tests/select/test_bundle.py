"""Deployment bundles (write, load, predict without scikit-learn, refuse damage) and the
Dispatcher that launches a bundle's configurations of the built-in matmul on PoCL."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from select_cli import perfport

from perfport._core import PerfportError
from perfport.kernels import builtin, load_problems
from perfport.select import SelectError
from perfport.select.bundle import load_bundle, write_bundle
from perfport.select.dispatch import Dispatcher
from perfport.select.tree import SelectorTree, Transform, model_inputs

tree_module = pytest.importorskip("sklearn.tree", reason="scikit-learn (the models extra)")

FEATURES = ("M", "N", "K", "batch", "trans_a", "trans_b")
PARAMS = ("row_tile", "acc_tile", "col_tile", "wg_rows", "wg_cols")
SMALL = {"row_tile": 1, "acc_tile": 2, "col_tile": 4, "wg_rows": 8, "wg_cols": 8}
LARGE = {"row_tile": 4, "acc_tile": 4, "col_tile": 2, "wg_rows": 1, "wg_cols": 64}
METADATA = {"device": "PoCL test", "performance": {"geomean": 0.93}, "k": 2}


def fitted(transform: Transform = Transform.LOG2) -> tuple[object, list[dict]]:
    """A tree sending M <= 16 to configuration 0 (SMALL), larger M to 1 (LARGE)."""
    problems = load_problems("lawson-gemm") + [
        {"M": m, "N": 8, "K": 8, "batch": 1, "trans_a": False, "trans_b": False}
        for m in (2, 5, 9, 16, 17, 24, 40)
    ]
    rows = np.array([[float(p[f]) for f in FEATURES] for p in problems])
    model = tree_module.DecisionTreeClassifier(max_leaf_nodes=8, random_state=0)
    model.fit(model_inputs(rows, [transform] * 6), (rows[:, 0] > 16).astype(int))
    return model, problems


def write(tmp_path: Path, transform: Transform = Transform.LOG2) -> tuple[Path, object]:
    model, _ = fitted(transform)
    out = tmp_path / "bundle"
    write_bundle(out, "matmul", PARAMS, [SMALL, LARGE], FEATURES, model, [transform] * 6, METADATA)
    return out, model


@pytest.mark.parametrize("transform", Transform)
def test_bundle_round_trip_predicts_like_the_model(tmp_path, transform):
    out, model = write(tmp_path, transform)
    assert sorted(p.name for p in out.iterdir()) == [
        "bundle.json", "selector.c", "selector.h", "selector.py",
    ]  # fmt: skip
    bundle = load_bundle(out)
    assert bundle.kernel == "matmul" and bundle.features == FEATURES
    assert dict(bundle.metadata) == METADATA
    manifest = json.loads((out / "bundle.json").read_text())
    assert manifest["format"] == "perfport-selector-bundle" and manifest["version"] == 1
    assert manifest["configurations"] == [SMALL, LARGE]
    assert [f["transform"] for f in manifest["features"]] == [transform.value] * 6
    _, problems = fitted(transform)
    rows = np.array([[float(p[f]) for f in FEATURES] for p in problems])
    expected = model.predict(model_inputs(rows, [transform] * 6))
    got = [bundle.predict({**p, "dtype": "float"}) for p in problems]  # extra values ignored
    assert got == [[SMALL, LARGE][i] for i in expected]


def predict_without_sklearn(bundle: Path) -> subprocess.CompletedProcess[str]:
    """wg_cols of the bundle's pick for a small and a large problem, in a process where any
    import of scikit-learn fails."""
    script = (
        "import sys; sys.modules['sklearn'] = None\n"
        "from perfport.select.bundle import load_bundle\n"
        f"b = load_bundle({str(bundle)!r})\n"
        "print(b.predict({'M': 4, 'N': 8, 'K': 8, 'batch': 1, 'trans_a': 0, 'trans_b': 0})"
        "['wg_cols'], b.predict({'M': 4000, 'N': 8, 'K': 8, 'batch': 1, 'trans_a': 1,"
        " 'trans_b': 0})['wg_cols'])\n"
    )
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)


def test_loading_and_predicting_need_no_sklearn(tmp_path):
    out, _ = write(tmp_path)
    done = predict_without_sklearn(out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["8", "64"]


def test_generated_python_in_the_bundle_agrees(tmp_path):
    out, _ = write(tmp_path)
    bundle = load_bundle(out)
    namespace: dict = {}
    exec(compile((out / "selector.py").read_text(), "selector.py", "exec"), namespace)
    _, problems = fitted()
    for p in problems:
        assert namespace["config"](**p) == bundle.predict(p)
    assert (
        "int matmul_select(long M, long N, long K, long batch, long trans_a, long trans_b)"
        in (out / "selector.h").read_text()
    )


def test_one_configuration_needs_no_tree(tmp_path):
    write_bundle(tmp_path, "matmul", PARAMS, [SMALL], FEATURES, None, metadata={})
    bundle = load_bundle(tmp_path)
    assert bundle.predict(dict.fromkeys(FEATURES, 7)) == SMALL
    with pytest.raises(SelectError, match="pass a fitted decision tree"):
        write_bundle(tmp_path, "matmul", PARAMS, [SMALL, LARGE], FEATURES, None)


def test_missing_features_are_named(tmp_path):
    out, _ = write(tmp_path)
    with pytest.raises(SelectError, match=r"lacks feature.*batch, trans_b") as info:
        load_bundle(out).predict({"M": 1, "N": 2, "K": 3, "trans_a": 0})
    assert "\n" not in str(info.value)


def damage(out: Path, edit) -> None:
    data = json.loads((out / "bundle.json").read_text())
    edit(data)
    (out / "bundle.json").write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="other"), "not a perfport selector bundle"),
        (lambda d: d.update(version=99), "format version 99"),
        (lambda d: d.pop("tree"), "lacks tree"),
        (lambda d: d["tree"]["left"].append(3), "different lengths"),
        (lambda d: d["tree"].update(left=[0] * len(d["tree"]["left"])), "out of order"),
        (lambda d: d["configurations"].pop(), "picks configuration 1 of 1"),
        (lambda d: d["configurations"][0].pop("wg_rows"), "must set exactly"),
        (lambda d: d["features"][0].update(transform="log10"), "transforms are"),
    ],
)
def test_damaged_bundles_are_refused_in_one_line(tmp_path, edit, message):
    out, _ = write(tmp_path)
    damage(out, edit)
    with pytest.raises(PerfportError, match=message) as info:
        load_bundle(out)
    assert isinstance(info.value, SelectError) and "\n" not in str(info.value)


def test_missing_and_unreadable_bundles(tmp_path):
    with pytest.raises(SelectError, match="not a directory"):
        load_bundle(tmp_path / "nowhere")
    with pytest.raises(SelectError, match=r"has no bundle\.json"):
        load_bundle(tmp_path)
    (tmp_path / "bundle.json").write_text("{not json")
    with pytest.raises(SelectError, match="not valid JSON"):
        load_bundle(tmp_path)


def test_bad_bundle_input_is_refused(tmp_path):
    model, _ = fitted()
    with pytest.raises(SelectError, match="not plain JSON"):
        write_bundle(tmp_path, "matmul", PARAMS, [SMALL, LARGE], FEATURES, model,
                     metadata={"when": object()})  # fmt: skip
    with pytest.raises(SelectError, match="must set exactly"):
        write_bundle(tmp_path, "matmul", PARAMS, [SMALL, {"row_tile": 1}], FEATURES, model)
    tree = SelectorTree.from_sklearn(model, FEATURES, [Transform.LOG2] * 6)
    with pytest.raises(SelectError, match="same feature names and transforms"):
        write_bundle(tmp_path, "matmul", PARAMS, [SMALL, LARGE], FEATURES, tree)
    assert not (tmp_path / "bundle.json").exists()


def test_select_predict_names_a_value_the_selector_does_not_read(tmp_path, capsys):
    model, _ = fitted()
    write_bundle(tmp_path, "matmul", PARAMS, [SMALL, LARGE], FEATURES, model)
    cli = ["select", "predict", "--bundle", str(tmp_path),
           "--problem", "M=4", "N=8", "K=8", "batch=1", "trans_a=0", "trans_b=0"]  # fmt: skip
    done = perfport([*cli, "--json"], capsys)
    assert done.returncode == 0 and json.loads(done.stdout)["config"] == SMALL, done.stderr
    typo = perfport([*cli, "Kk=3"], capsys)
    assert typo.returncode == 2 and "not Kk" in typo.stderr


def test_a_value_the_data_held_at_one_value_is_taken_and_noted_where_it_differs(
    tmp_path, cpu, capsys
):
    # Fitted where batch and the transposes never varied: the selector reads K, M, N only,
    # and 'select predict' refused the six values it had taken before.
    fixed = {"batch": 1, "trans_a": False, "trans_b": False}
    tree = SelectorTree.constant(("K", "M", "N"), 0)
    write_bundle(tmp_path, "matmul", PARAMS, [SMALL], ("K", "M", "N"), tree,
                 metadata={"fixed_problem": fixed})  # fmt: skip
    cli = ["select", "predict", "--bundle", str(tmp_path),
           "--json", "--problem", "K=64", "M=64", "N=64", "trans_a=0", "trans_b=false"]  # fmt: skip
    same = perfport([*cli, "batch=1"], capsys)
    assert same.returncode == 0 and same.stderr == "", same.stderr
    assert json.loads(same.stdout)["notes"] == []
    other = perfport([*cli, "batch=2"], capsys)
    assert other.returncode == 0 and json.loads(other.stdout)["config"] == SMALL, other.stderr
    note = "the bundle was fitted only at batch=1, not batch=2"
    assert note in json.loads(other.stdout)["notes"][0]
    assert other.stderr.count("\n") == 1 and note in other.stderr
    typo = perfport([*cli, "bacth=1"], capsys)
    assert typo.returncode == 2 and "not bacth" in typo.stderr
    # The Dispatcher takes the same values and gives the same note, once.
    with Dispatcher(tmp_path, device=cpu) as dispatcher:
        with pytest.warns(RuntimeWarning, match=note):
            assert dict(dispatcher.choose({"K": 64, "M": 64, "N": 64, "batch": 2})) == SMALL
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dispatcher.choose({"K": 64, "M": 64, "N": 64, "batch": 1, "trans_a": False})
            dispatcher.choose({"K": 32, "M": 64, "N": 64, "batch": 2})  # said once


# ---- Dispatcher on PoCL --------------------------------------------------------------------
def test_dispatcher_launches_the_chosen_configuration(tmp_path, cpu):
    out, _ = write(tmp_path)
    spec = builtin("matmul")
    problems = [
        {"M": 5, "N": 7, "K": 9},
        {"M": 13, "N": 3, "K": 20, "trans_a": True},
        {"M": 33, "N": 10, "K": 6, "batch": 2},
        {"M": 40, "N": 17, "K": 11, "batch": 2},
        {"M": 3, "N": 9, "K": 4},
    ]
    rng = np.random.default_rng(0)
    with Dispatcher(out, device=cpu) as dispatcher:
        assert dict(dispatcher.choose(problems[0])) == SMALL
        assert dict(dispatcher.choose(problems[2])) == LARGE
        for problem in problems:
            full = spec.problem.merged(problem)
            m, n, k, b = (int(full[x]) for x in ("M", "N", "K", "batch"))
            inputs = {
                "lhs": rng.random(b * m * k, dtype=np.float32),
                "rhs": rng.random(b * k * n, dtype=np.float32),
            }
            result = dispatcher.run(problem, inputs)
            expected = spec.reference(full, inputs)["out"]
            np.testing.assert_allclose(result["out"], expected, rtol=1e-5, atol=1e-5)
        # One build per distinct set of -D defines: SMALL, SMALL transposed, LARGE.
        assert dispatcher.builds == 3


def test_dispatcher_refuses_a_bundle_of_another_kernel(tmp_path, cpu):
    write_bundle(tmp_path, "vector_add", PARAMS, [SMALL], FEATURES, None)
    with pytest.raises(SelectError, match="fit the bundle for this kernel"):
        Dispatcher(tmp_path, device=cpu)
    out, _ = write(tmp_path / "ok")
    with Dispatcher(out, device=cpu) as dispatcher:
        with pytest.raises(SelectError, match="needs input array 'rhs'"):
            dispatcher.run({"M": 2, "N": 2, "K": 2}, {"lhs": np.ones(4, np.float32)})
        with pytest.raises(SelectError, match="lhs has 3 elements; this problem needs 4"):
            dispatcher.run({"M": 2, "N": 2, "K": 2}, {"lhs": np.ones(3), "rhs": np.ones(4)})
        # M = 0 failed in the driver (a traceback), M < 0 as an array of the wrong size.
        for m in (0, -4):
            with pytest.raises(SelectError, match=f"lhs would have {2 * m} elements"):
                dispatcher.run({"M": m, "N": 2, "K": 2}, {"lhs": np.ones(4), "rhs": np.ones(4)})
        with pytest.raises(SelectError, match="M must be an integer"):  # it ran at M=64.5
            dispatcher.run({"M": 2.5, "N": 2, "K": 2}, {"lhs": np.ones(4), "rhs": np.ones(4)})
        with pytest.raises(SelectError, match="no problem value Q"):
            dispatcher.run({"Q": 1}, {"lhs": np.ones(4), "rhs": np.ones(4)})


def test_dispatcher_choose_refuses_what_run_refuses(tmp_path, cpu):
    """choose and choice answered for a misspelt name (the default M), M=-4 and M=2.5,
    which run refuses: each is run's one-line SelectError now."""
    out, _ = write(tmp_path)
    base = {"N": 2, "K": 2}
    with Dispatcher(out, device=cpu) as dispatcher:
        for problem, message in [
            ({**base, "MM": 2}, "no problem value MM"),
            ({**base, "M": -4}, "lhs would have -8 elements"),
            ({**base, "M": "2"}, "M must be an integer"),
            ({**base, "M": 2.5}, "M must be an integer"),
        ]:
            for ask in (dispatcher.choose, dispatcher.choice):
                with pytest.raises(SelectError, match=message):
                    ask(problem)
        assert (
            dispatcher.choose({**base, "M": 2})
            == dispatcher.bundle.configs[dispatcher.choice({**base, "M": 2}).index]
        )


def test_a_perfport_selector_can_be_bundled(tmp_path):
    from perfport.select import Classifier, Selector

    _, problems = fitted()
    rows = np.array([[float(p[f]) for f in FEATURES] for p in problems])
    labels = (rows[:, 1] > 300).astype(int) + (rows[:, 4] > 0)
    selector = Selector(Classifier.DECISION_TREE_B).fit(rows, labels, FEATURES)
    configs = [SMALL, LARGE, {**SMALL, "wg_rows": 16}]
    write_bundle(tmp_path, "matmul", PARAMS, configs, FEATURES, selector)
    bundle = load_bundle(tmp_path)
    assert [bundle.choose(p) for p in problems] == list(selector.predict(rows))
    one_class = Selector(Classifier.LINEAR_SVM).fit(rows, np.full(len(rows), 1), FEATURES)
    write_bundle(tmp_path / "one", "matmul", PARAMS, configs, FEATURES, one_class)
    assert load_bundle(tmp_path / "one").predict(problems[0]) == LARGE


def test_a_regret_tree_bundle_predicts_without_sklearn_and_a_bare_regressor_is_refused(tmp_path):
    from perfport.select import Classifier, Selector

    _, problems = fitted()
    rows = np.array([[float(p[f]) for f in FEATURES] for p in problems])
    small = rows[:, 0] <= 64
    # SMALL is 3x faster on small problems, LARGE 2x faster on the others.
    times = np.column_stack([np.where(small, 1.0, 2.0), np.where(small, 3.0, 1.0)])
    labels = np.argmin(times, axis=1)
    selector = Selector(Classifier.DECISION_TREE_REGRET_DERIVED).fit(
        rows, labels, FEATURES, times=times
    )
    write_bundle(tmp_path, "matmul", PARAMS, [SMALL, LARGE], FEATURES, selector)
    assert [load_bundle(tmp_path).choose(p) for p in problems] == labels.tolist()
    done = predict_without_sklearn(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["8", "64"]
    # A regression tree fitted to something else (here runtimes) is no selector.
    runtimes = tree_module.DecisionTreeRegressor().fit(rows, times[:, 0])
    with pytest.raises(SelectError, match="is a regression tree"):
        write_bundle(tmp_path / "bare", "matmul", PARAMS, [SMALL, LARGE], FEATURES, runtimes)
    with pytest.raises(SelectError, match="times must be positive"):
        Selector(Classifier.DECISION_TREE_REGRET_DERIVED).fit(rows, labels, times=times * 0)


def test_fit_bundle_ships_the_evaluated_set_in_index_order(tmp_path):
    from perfport.select import choose, fit_bundle, load_csv, normalise

    # 48 shapes of the 640 configurations (the shipped H100 table's 431 take seconds to read);
    # greedy chooses 0, 351, 5, 510 there, out of index order.
    table = load_csv(Path(__file__).parents[2] / "data/lawson-gemm/xeon16-pocl.csv.gz")
    bundle = fit_bundle(table, 4, tmp_path, classifier="decision_tree_a_derived")
    chosen = choose(normalise(table.times), 4, "greedy", 0, table.problems)
    assert [table.config_index(dict(c)) for c in bundle.configs] == sorted(chosen.tolist())


def test_select_fit_never_ships_a_configuration_that_failed_everywhere(tmp_path, capsys):
    # WG=8 failed at every problem; once WG=16 (the optimum everywhere) was chosen, every gain
    # tied and the fill shipped WG=8 for its lowest index, which a Dispatcher fell back to.
    from perfport.cli import main
    from perfport.select import PerfTable
    from perfport.select.table_file import save_csv

    n = np.array([[4096.0], [16384.0], [65536.0]])
    times = np.array([[np.nan, 1.0, 2.0, np.nan]] * 3) * n / 4096
    table = PerfTable(("n",), n, ("WG",), ((8,), (16,), (32,), (64,)), times, "dev", "reduce")
    save_csv(table, tmp_path / "t.csv.gz")
    argv = ["select", "fit", "--data", str(tmp_path / "t.csv.gz"), "--out", str(tmp_path / "b")]
    assert main([*argv, "--kernels", "2", "--json"]) == 0
    done = capsys.readouterr()
    report = json.loads(done.out)
    assert report["configs"] == [{"WG": 16}, {"WG": 32}] and report["k"] == 2
    assert "ran" not in done.err  # no notice of fewer shipped (only that no spec was given)
    assert main([*argv, "--kernels", "4", "--json"]) == 0  # only two ran: ship those, say so
    done = capsys.readouterr()
    assert json.loads(done.out)["k"] == 2 and len(load_bundle(tmp_path / "b").configs) == 2
    notices = [line for line in done.err.splitlines() if "ran" in line]
    assert len(notices) == 1 and "only 2 of the table's configurations ran" in notices[0]


def test_files_that_are_not_a_bundle_are_never_replaced(tmp_path):
    # A directory with a selector.c of the user's own, and no bundle.json: it was overwritten.
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "selector.c").write_text("/* mine */\n")
    model, _ = fitted()
    with pytest.raises(SelectError, match=r"holds selector\.c but is not a selector bundle"):
        write_bundle(mine, "matmul", PARAMS, [SMALL, LARGE], FEATURES, model)
    assert (mine / "selector.c").read_text() == "/* mine */\n"
    out, _ = write(tmp_path)
    write_bundle(out, "matmul", PARAMS, [LARGE, SMALL], FEATURES, model)  # a bundle: refitted
    assert dict(load_bundle(out).configs[0]) == LARGE


def test_a_manifest_given_for_its_directory_names_the_directory(tmp_path):
    out, _ = write(tmp_path)
    with pytest.raises(SelectError, match=f"give its directory, {out}"):
        load_bundle(out / "bundle.json")


def test_a_size_too_large_for_a_double_is_one_line(tmp_path):
    out, _ = write(tmp_path)
    problem = {"M": 10**400, "N": 1, "K": 1, "batch": 1, "trans_a": 0, "trans_b": 0}
    with pytest.raises(SelectError, match=r"M=1000.*\.\.\. is not finite"):
        load_bundle(out).choose(problem)


def test_fit_with_no_numeric_problem_value_is_one_line(tmp_path):
    # A Kernel Tuner cache whose only problem value is the string problem_size "4096x4096":
    # scikit-learn's "Found array with 0 feature(s)" came out as a traceback.
    from perfport.select import PerfTable, fit_bundle, fit_selector

    table = PerfTable((), np.zeros((1, 0)), ("WG",), ((8,), (16,)), np.array([[1.0, 2.0]]),
                      "dev", "gemm", fixed={"problem_size": "4096x4096"})  # fmt: skip
    with pytest.raises(SelectError, match=r"no numeric value.*problem_size='4096x4096'"):
        fit_bundle(table, 2, tmp_path / "b")
    with pytest.raises(SelectError, match="no problem feature"):
        fit_selector(table, np.array([0, 1]), "decision_tree_a")
    assert not (tmp_path / "b").exists()


def test_select_predict_refuses_a_problem_a_dispatcher_refuses(tmp_path, capsys):
    # M=0 leaves lhs no elements: Dispatcher.choose refused it, select predict said legal.
    from perfport.cli import main

    out, _ = write(tmp_path)
    values = ["N=8", "K=8", "batch=1", "trans_a=0", "trans_b=0"]
    argv = ["select", "predict", "--bundle", str(out), "--json", "--problem", *values]
    assert main([*argv, "M=4"]) == 0
    assert json.loads(capsys.readouterr().out)["legal"] is True
    assert main([*argv, "M=0"]) == 2
    err = capsys.readouterr().err
    assert "would have 0 elements" in err and len(err.strip().splitlines()) == 1
