"""Collected work-group-size data: scenarios, the dataset built from the store, its file."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import fill_wg_campaign, tiny_wg_dataset
from perfport import builtin
from perfport.cli import main
from perfport.space import kernel_space
from perfport.store import Store
from perfport.wg import dataset_from_store, evaluate, load_dataset, save_dataset
from perfport.wg.scenarios import REAL_WORLD, scenarios


@pytest.fixture
def perfport(capsys):
    """``perfport ARGS`` run in this process (the commands' parsing, output and exit codes,
    without a Python start and scikit-learn's import each): returncode, stdout, stderr."""

    def run(*argv):
        capsys.readouterr()
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


def test_scenarios_cover_real_world_then_synthetic():
    chosen = scenarios(60, sizes=(512, 1024), seed=3)
    assert (
        len(chosen) == 60 and len({c.problem for c in chosen if c.kernel == "synthetic"}) == 60 - 16
    )
    assert {c.kernel for c in chosen} == {*REAL_WORLD, "synthetic"}
    for c in chosen:  # every scenario is legal for its kernel
        spec = builtin(c.kernel)
        assert len(kernel_space(spec, spec.problem.merged(dict(c.problem)))) > 0, c.label
    assert scenarios(60, sizes=(512, 1024), seed=3) == chosen


def test_compact_scenarios_stay_within_their_borders():
    # The shipped list must not move: later collections resume "the first N of the list".
    assert scenarios(60, sizes=(512, 1024), seed=3, max_border=30) == scenarios(
        60, sizes=(512, 1024), seed=3
    )
    compact = scenarios(40, sizes=(512,), seed=1, max_border=5, real_world=False)
    assert len(compact) == 40 and {c.kernel for c in compact} == {"synthetic"}
    sides = [dict(c.problem)[k] for c in compact for k in ("north", "south", "east", "west")]
    assert max(sides) == 5 and min(sides) == 0
    # 1 border x 1 size x 5 types x 2 complexities: 10 distinct synthetic scenarios at most
    assert len(scenarios(10, sizes=(512,), max_border=0, real_world=False)) == 10
    with pytest.raises(ValueError, match="only 10"):
        scenarios(11, sizes=(512,), max_border=0, real_world=False)


def test_collect_asking_for_too_many_compact_scenarios_is_one_line(tmp_path, perfport):
    run = perfport("wg", "collect", "--scenarios", "50", "--sizes", "512", "--max-border", "0",
                   "--no-real-world", "--db", tmp_path / "x.db")  # fmt: skip
    assert run.returncode == 2 and "only 10" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "x.db").exists()


def test_dataset_from_store_round_trips(db, cpu, tmp_path, perfport):
    with Store(db) as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
        fill_wg_campaign(store, cpu, "gaussian", {"width": 1024, "height": 1024, "radius": 3}, 2.0)
        fill_wg_campaign(
            store, cpu, "synthetic", {"width": 512, "height": 512, "north": 5, "complex": True}, 3.0
        )
        data = dataset_from_store(store)
    assert (
        len(data) == 3
        and data.features.shape[1] > 20
        and set(data.kernel) >= {"heat", "gaussian[r=3]"}
    )
    col = data.column(8, 8)
    assert col is not None and np.isnan(data.runtimes[:, col]).all()  # refused sizes are not times
    assert data.synthetic.tolist().count(True) == 1
    path = tmp_path / "wg.npz"
    save_dataset(data, path)
    again = load_dataset(path)
    assert (
        np.array_equal(again.runtimes, data.runtimes, equal_nan=True)
        and again.feature_names == data.feature_names
    )
    (result,) = evaluate(again, ["decision_tree+nearest_neighbour"], ["synthetic-real"])
    assert result.scenarios == 2 and 0 < result.performance <= 1

    done = perfport("wg", "dataset", "--db", db, "--out", tmp_path / "cli.npz", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scenarios"] == 3
    merged = tmp_path / "merged.npz"
    done = perfport("wg", "dataset", "--merge", path, "--db", db, "--out", merged, "--json")
    assert done.returncode == 0, done.stderr
    # The dataset holds the store's scenarios already: each is kept once, not twice.
    assert json.loads(done.stdout)["scenarios"] == 3 and json.loads(done.stdout)["duplicates"] == 3
    assert np.array_equal(load_dataset(merged).runtimes[:3], again.runtimes, equal_nan=True)
    # Replacing a device's scenarios: the merged file's are dropped, the store's stay.
    device = str(again.device[0])
    replaced = tmp_path / "replaced.npz"
    args = ["wg", "dataset", "--merge", merged, "--db", db, "--drop-device", device, "--out",
            replaced, "--json"]  # fmt: skip
    done = perfport(*args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scenarios"] == 3
    assert np.array_equal(load_dataset(replaced).runtimes, again.runtimes, equal_nan=True)
    done = perfport(*args[:-5], "--drop-device", "no such device", "--out", replaced)
    assert (
        done.returncode == 2
        and "--drop-device: no --merge scenario is on no such device" in done.stderr
    )


def test_train_and_predict_for_unseen_kernel_and_problem(db, cpu, tmp_path, perfport):
    from perfport.wg.model import load_model, train
    from perfport.wg.predict import predict_wg, refused_sizes

    with Store(db) as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
        fill_wg_campaign(store, cpu, "gaussian", {"width": 1024, "height": 1024, "radius": 3}, 2.0)
        data = dataset_from_store(store)
    for method in ("speedup_regressor", "decision_tree+nearest_neighbour", "performance_knn+fixed"):
        path = tmp_path / f"{method}.model"
        train(data, method).save(path)
        model = load_model(path)
        p = predict_wg(model, builtin("sobel"), {"width": 2048, "height": 2048}, cpu)  # never seen
        assert p.method == method and p.wg[0] * p.wg[1] <= cpu.max_work_group_size
        assert list(p.wg) in data.sizes.tolist()
        # Sizes the device refused before are never proposed again.
        everything = {tuple(s) for s in data.sizes.tolist()}
        keep = (32, 4)
        p = predict_wg(model, builtin("heat"), {}, cpu, refused=everything - {keep})
        assert p.wg == keep
    assert refused_sizes(db, builtin("heat"), cpu) == {(8, 8)}

    out = perfport("wg", "predict", "--kernel", "gol", "--model", path, "--problem", "width=1024",
                   "height=1024", "--db", db, "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert set(answer) >= {"wg", "method", "predict_ms"} and len(answer["wg"]) == 2
    # A stencil of the user's own, described in a JSON file (never measured, never built in).
    own = tmp_path / "own.json"
    own.write_text(
        json.dumps(
            {"name": "cross", "body": "return GET(0, -2) + GET(3, 0);", "north": 2, "east": 3}
        )
    )
    out = perfport("wg", "predict", "--kernel", own, "--model", path, "--problem", "width=700",
                   "height=300", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["wg"] in data.sizes.tolist()
    bad = perfport("wg", "predict", "--kernel", "gol", "--model", db)
    assert bad.returncode == 2 and "not a perfport work-group model" in bad.stderr


def test_shipped_dataset_and_default_model(tmp_path, monkeypatch, perfport):
    """Without --data and --model, perfport uses its own dataset and a model trained on it
    (once, then cached)."""
    from perfport.wg.model import shipped_dataset

    data = load_dataset(shipped_dataset())
    assert len(data) >= 200 and len(set(data.device.tolist())) >= 2
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["wg", "predict", "--kernel", "gaussian", "--problem", "width=512", "height=512",
            "radius=3", "--json"]  # fmt: skip
    for _ in range(2):  # trains, then loads the cached model (no perfport.db where it runs)
        done = perfport(*args)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        wc, wr = answer["wg"]
        assert wc * wr <= 4096 and answer["method"] == "performance_forest+novel"
        assert answer["novel"] in (True, False)
    assert len(list((tmp_path / "perfport").glob("wg-performance_forest+novel-*.pkl"))) == 1


def test_replacing_remeasured_scenarios_keeps_the_old_rows_apart():
    from perfport.wg import replace_scenarios

    base = tiny_wg_dataset(
        ((1, 1), (2, 1), (4, 1)),
        [[3.0, 2.0, 1.0], [1.0, 2.0, 3.0], [5.0, 5.0, 5.0]],
        [("gpu", "sobel", "512"), ("gpu", "synthetic", "512"), ("gpu", "synthetic", "512")],
        [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]],
    )
    # Measured again, sizes in another order: the second synthetic scenario (told apart by its
    # features), where w(1x1) did not run this time; sobel with the same times; and a scenario
    # base lacks.
    new = tiny_wg_dataset(
        ((4, 1), (2, 1), (1, 1)),
        [[9.0, 8.0, np.nan], [1.0, 2.0, 3.0], [7.0, 7.0, 7.0]],
        [("gpu", "synthetic", "512"), ("gpu", "sobel", "512"), ("gpu", "heat", "512")],
        [[2.0, 0.0], [0.0, 0.0], [0.0, 1.0]],
    )
    updated, old = replace_scenarios(base, new)
    assert len(updated) == 4 and updated.kernel.tolist()[-1] == "heat"
    assert np.array_equal(updated.runtimes[2], [np.nan, 8.0, 9.0], equal_nan=True)
    assert np.array_equal(updated.runtimes[:2], base.runtimes[:2])  # unchanged rows stay
    assert len(old) == 1 and old.runtimes[0].tolist() == [5.0, 5.0, 5.0]
    again, none = replace_scenarios(updated, new)  # replacing twice changes nothing
    assert len(again) == 4 and len(none) == 0


def test_wg_dataset_replace_from_the_command_line(db, cpu, tmp_path, perfport):
    with Store(db) as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
        fill_wg_campaign(store, cpu, "gol", {"width": 512, "height": 512}, 2.0)
    base = tmp_path / "base.npz"
    save_dataset(dataset_from_store(Store(db, create=False)), base)
    again = tmp_path / "again.db"
    with Store(again) as store:  # heat measured again, twice as slow; sobel is new
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 2.0)
        fill_wg_campaign(store, cpu, "sobel", {"width": 512, "height": 512}, 1.0)
    out, old = tmp_path / "out.npz", tmp_path / "old.npz"
    cli = ["wg", "dataset"]
    done = perfport(*cli, "--merge", base, "--db", again, "--replace", "--superseded", old,
                    "--out", out, "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["scenarios"] == 3 and summary["replaced"] == 1
    before, after, kept = load_dataset(base), load_dataset(out), load_dataset(old)
    heat = before.kernel.tolist().index("heat")
    assert np.allclose(after.runtimes[heat], 2 * before.runtimes[heat], equal_nan=True)
    assert np.array_equal(kept.runtimes[0], before.runtimes[heat], equal_nan=True)
    bad = perfport(*cli, "--db", again, "--replace", "--out", out)
    assert bad.returncode == 2 and "--replace needs --merge" in bad.stderr


def test_superseded_rows_are_added_to_the_archive_never_emptied(db, cpu, tmp_path, perfport):
    with Store(db) as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
    base = tmp_path / "base.npz"
    save_dataset(dataset_from_store(Store(db, create=False)), base)
    again = tmp_path / "again.db"
    with Store(again) as store:  # heat measured again, twice as slow
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 2.0)
    old, out = tmp_path / "old.npz", tmp_path / "out.npz"
    cli = ["wg", "dataset", "--db", again, "--replace", "--superseded", old, "--json"]

    def replace(merged, written):
        done = perfport(*cli, "--merge", merged, "--out", written)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    # An empty archive (earlier versions wrote one when nothing was replaced) holds nothing.
    save_dataset(load_dataset(base).subset(np.zeros(0, dtype=np.int64)), old)
    first = replace(base, out)
    assert first["replaced"] == 1 and first["superseded_rows"] == 1
    again_out = replace(out, tmp_path / "out2.npz")  # replaces nothing: the archive stays
    assert again_out["replaced"] == 0 and again_out["superseded_rows"] == 1
    assert len(load_dataset(old)) == 1
    older = load_dataset(base)  # another, older measurement of heat: its rows are added
    save_dataset(type(older)(**{**older.__dict__, "runtimes": older.runtimes * 3}), base)
    third = replace(base, tmp_path / "out3.npz")
    assert third["replaced"] == 1 and third["superseded_rows"] == 2
    kept = load_dataset(old)
    assert len(kept) == 2 and not np.array_equal(kept.runtimes[0], kept.runtimes[1])
    old.unlink()  # nothing replaced and no archive yet: none is written
    assert replace(out, tmp_path / "out4.npz")["superseded_rows"] == 0 and not old.exists()


def test_save_dataset_cut_short_leaves_the_old_file(monkeypatch, tmp_path):
    data = tiny_wg_dataset(((1, 1),), [[1.0]], [("gpu", "heat", "512")], [[0.0, 0.0]])
    path = tmp_path / "d.npz"
    save_dataset(data, path)

    def cut(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", cut)
    with pytest.raises(KeyboardInterrupt):
        save_dataset(data, path)
    assert len(load_dataset(path)) == 1 and [p.name for p in tmp_path.iterdir()] == ["d.npz"]
