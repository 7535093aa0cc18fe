"""``perfport wg ...`` with inputs and outputs a user gets wrong: one line (exit 2), and no
file a command reads or another command wrote is lost."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import numpy as np
import pytest

from conftest import tiny_wg_dataset
from perfport.cli import main
from perfport.wg import load_dataset, save_dataset
from perfport.wg.model import is_model_file, train

SIZES = [(4, 4), (8, 4), (16, 4), (32, 4)]


def _dataset(path):
    names = [("d", "heat", "512"), ("d", "gol", "512"), ("d", "synthetic", "512")]
    runtimes = [[4.0, 2.0, 1.0, 3.0], [1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 3.0, 4.0]]
    save_dataset(tiny_wg_dataset(SIZES, runtimes, names, [[1, 2], [3, 4], [5, 6]]), path)
    return path


def _refused(argv, capsys):
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_an_output_that_is_an_input_or_another_kind_of_file_is_refused(tmp_path, capsys):
    # train --out its own --data replaced the dataset with a model; 'wg dataset --out' over a
    # model replaced it with a dataset, silently.
    data = _dataset(tmp_path / "data.npz")
    model = tmp_path / "m.model"
    train(load_dataset(data), "performance_knn").save(model)
    train_ = ["wg", "train", "--method", "performance_knn", "--data", data]
    assert "is also --data" in _refused([*train_, "--out", data], capsys)
    assert "is a work-group dataset" in _refused(
        [*train_, "--out", _dataset(tmp_path / "b.npz")], capsys
    )
    assert load_dataset(data) and load_dataset(tmp_path / "b.npz")  # both still datasets
    assert "is a trained work-group model" in _refused(
        ["wg", "dataset", "--merge", data, "--out", model], capsys
    )
    assert "is also --merge" in _refused(["wg", "dataset", "--merge", data, "--out", data], capsys)
    assert is_model_file(model) and load_dataset(data)
    assert main(["wg", "train", "--method", "performance_knn", "--data", str(data), "--out",
                 str(model)]) == 0  # fmt: skip


def test_a_scenario_read_twice_is_kept_once_and_a_remeasurement_stays(tmp_path, capsys):
    # --merge of a dataset with the store it came from (or --db twice) doubled every scenario,
    # and the copies sat in a training fold and its test fold at once.
    data = _dataset(tmp_path / "data.npz")
    again = load_dataset(data)
    slower = tmp_path / "slower.npz"  # the first scenario measured again: other times
    first = again.subset(np.array([0]))
    save_dataset(replace(first, runtimes=first.runtimes * 2), slower)
    out = tmp_path / "out.npz"
    argv = ["wg", "dataset", "--merge", data, "--merge", data, "--merge", slower, "--out", out]
    assert main([*map(str, argv), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["scenarios"] == 4 and summary["duplicates"] == 3
    assert load_dataset(out).kernel.tolist() == ["heat", "gol", "synthetic", "heat"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"runtimes": np.full((3, 4), np.nan)}, "no size that ran"),
        ({"runtimes": np.array([[np.inf, 1, 1, 1], [1, 2, 3, 4], [2, 1, 3, 4]])}, "not positive"),
        ({"runtimes": np.array([[0.0, 1, 1, 1], [1, 2, 3, 4], [2, 1, 3, 4]])}, "not positive"),
        ({"runtimes": -np.ones((3, 4))}, "not positive and finite"),
        ({"features": np.array([[np.nan, 1], [3, 4], [5, 6]])}, "NaN or infinite feature"),
        ({"feature_names": ("a",)}, "1 feature names for 2 feature columns"),
        ({"runtimes": np.zeros((0, 4)), "features": np.zeros((0, 2)), "max_wg": np.zeros(0)},
         "no scenarios"),
    ],
)  # fmt: skip
def test_a_dataset_with_unusable_values_is_one_line_naming_the_file(
    tmp_path, capsys, change, problem
):
    # All-NaN, inf or 0 runtimes and no scenarios crashed evaluate and train with a ValueError
    # traceback; negative runtimes scored 275%; NaN features were accepted.
    good = load_dataset(_dataset(tmp_path / "good.npz"))
    bad = tmp_path / "bad.npz"
    empty = "max_wg" in change
    labels = {f: getattr(good, f)[:0] for f in ("device", "kernel", "dataset", "synthetic")}
    save_dataset(replace(good, **change, **(labels if empty else {})), bad)
    for command in (
        ["evaluate", "--methods", "performance_knn"],
        ["train", "--out", tmp_path / "m"],
    ):
        err = _refused(["wg", *command, "--data", bad], capsys)
        assert str(bad) in err and problem in err
    assert not (tmp_path / "m").exists()


def _save_raw(path, good, **arrays):
    """``good``'s arrays with ``arrays`` in their place, saved as numpy saves them (no
    WgDataset between: a hand-made or foreign file)."""
    fields = {f: getattr(good, f) for f in ("sizes", "runtimes", "max_wg", "features", "device",
                                            "kernel", "dataset", "synthetic")}  # fmt: skip
    np.savez(path, **{**fields, "feature_names": np.array(good.feature_names), **arrays})
    return path


_RUNTIMES = [[4.0, 2.0, 1.0, 3.0], [1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 3.0, 4.0]]


@pytest.mark.parametrize(
    ("arrays", "problem"),
    [
        ({"runtimes": np.array(_RUNTIMES).astype(str)}, "'runtimes' holds strings, not real"),
        ({"runtimes": np.array(_RUNTIMES) + 1j}, "'runtimes' holds complex numbers"),
        ({"features": np.array([["1", "2"]] * 3)}, "'features' holds strings"),
        ({"features": np.full((3, 2), 1e300)}, "a feature beyond float32's range"),
        ({"feature_names": np.array([1, 2])}, "'feature_names' holds integers, not printable"),
        ({"feature_names": np.array(["x", "x"])}, "the feature name 'x' is listed twice"),
        ({"device": np.array(["d", "d"])}, "'device' has 2 rows for the 3 rows of 'runtimes'"),
        ({"device": np.array([1, 2, 3])}, "'device' holds integers"),
        ({"kernel": np.array(["heat"])}, "'kernel' has 1 rows"),
        ({"dataset": np.array(["512"] * 4)}, "'dataset' has 4 rows"),
        ({"kernel": np.array(["heat\x1b[31m", "gol", "x"])}, "a control character"),
        ({"synthetic": np.array(["yes", "no", "no"])}, "'synthetic' holds strings"),
        ({"synthetic": np.array([True])}, "'synthetic' has 1 rows"),
        ({"max_wg": np.zeros(3, dtype=int)}, "('max_wg') of 0, below 1"),
        ({"max_wg": -np.ones(3, dtype=int)}, "('max_wg') of -1, below 1"),
        ({"max_wg": np.full(3, 2.5)}, "'max_wg' holds floats such as 2.5, not whole"),
        ({"sizes": -np.array(SIZES)}, "4 work-group size(s) in 'sizes' are below 1"),
        ({"sizes": np.array(SIZES) * [0, 1]}, "e.g. 0x4"),
        ({"sizes": np.array(SIZES) + 0.5}, "'sizes' holds floats such as 4.5"),
        ({"sizes": np.array(SIZES) * 10**15}, "above 2147483647 items"),
        ({"sizes": np.array([(4, 4)] * 4)}, "4x4 is listed twice"),
        ({"sizes": np.array(SIZES)[:3]}, "'sizes' has shape (3, 2), not (4, 2)"),
    ],
)  # fmt: skip
def test_a_dataset_with_wrong_arrays_is_one_line_on_every_command(
    tmp_path, capsys, arrays, problem
):
    # String or complex runtimes and features were tracebacks (TypeError, scikit-learn's
    # ValueError), as were features beyond float32; a short 'device' trained, then was an
    # IndexError in 'evaluate --by-device' and 'dataset --merge'; negative, zero, fractional
    # or huge sizes and a zero 'max_wg' trained, and the model found no legal size only when
    # it predicted (and --merge made the union of the wrong sizes and the right ones).
    good = load_dataset(_dataset(tmp_path / "good.npz"))
    bad = _save_raw(tmp_path / "bad.npz", good, **arrays)
    out = tmp_path / "out.npz"
    for command in (
        ["wg", "evaluate", "--methods", "performance_knn", "--by-device", "--data", bad],
        ["wg", "train", "--out", tmp_path / "m", "--data", bad],
        ["wg", "dataset", "--merge", tmp_path / "good.npz", "--merge", bad, "--out", out],
    ):
        err = _refused(command, capsys)
        assert f"{bad}: " in err and problem in err and "write it again" in err, err
    assert not (tmp_path / "m").exists() and not out.exists()


def test_whole_numbers_and_flags_in_other_types_still_load(tmp_path):
    # Integer runtimes, a whole-number float max_wg and 0/1 synthetic flags mean the same
    # thing: they load as the dataset's own types.
    good = load_dataset(_dataset(tmp_path / "good.npz"))
    path = _save_raw(tmp_path / "other.npz", good, runtimes=np.array(_RUNTIMES, dtype=int),
                     max_wg=np.full(3, 1024.0), synthetic=np.array([0, 0, 1]))  # fmt: skip
    data = load_dataset(path)
    assert data.runtimes.dtype == np.float64 and data.max_wg.dtype == np.int64
    assert data.synthetic.tolist() == [False, False, True] == good.synthetic.tolist()


def test_a_size_that_did_not_run_is_still_nan(tmp_path, capsys):
    data = load_dataset(_dataset(tmp_path / "data.npz"))
    gaps = data.runtimes.copy()
    gaps[0, :2] = np.nan  # refused or illegal: the format's gap, not an error
    save_dataset(replace(data, runtimes=gaps), tmp_path / "gaps.npz")
    assert np.isnan(load_dataset(tmp_path / "gaps.npz").runtimes[0, :2]).all()


def test_predict_refuses_a_db_that_is_not_there(tmp_path, capsys):
    # A typo in --db (or a folder that does not exist) was ignored: no refused size avoided.
    for db in (tmp_path / "typo.db", tmp_path / "no folder" / "x.db"):
        err = _refused(["wg", "predict", "--kernel", "sobel", "--db", db], capsys)
        assert f"no results database at {db}" in err


def test_predict_and_evaluate_name_what_is_wrong_with_their_files(tmp_path, capsys):
    # A broken --kernel JSON pointed at 'perfport space' search-space files, which 'wg
    # predict' does not take; a --data that is not there was "not a ... dataset".
    (tmp_path / "trunc.json").write_text('{"name": "x", "body": "return GET(0,0);"\n')
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    for name in ("trunc.json", "binary.json"):
        err = _refused(["wg", "predict", "--kernel", tmp_path / name], capsys)
        assert "not JSON" in err and "stencil description" in err and "space" not in err
    (tmp_path / "noname.json").write_text('{"body": "return GET(0,0);"}')
    assert "name is missing" in _refused(
        ["wg", "predict", "--kernel", tmp_path / "noname.json"], capsys
    )
    err = _refused(["wg", "evaluate", "--data", tmp_path / "nonexist.npz"], capsys)
    assert "no such file" in err and "not a perfport" not in err


def test_a_dataset_from_a_missing_store_names_wg_collect(tmp_path, capsys):
    # The store's own message said "run 'perfport tune' first".
    err = _refused(
        ["wg", "dataset", "--db", tmp_path / "nosuch.db", "--out", tmp_path / "o.npz"], capsys
    )
    assert "perfport wg collect" in err and "perfport tune" not in err


def test_evaluate_drops_repeats_and_refuses_a_split_without_samples(tmp_path, capsys):
    # --partitions kernel,kernel ran twice and gave two identical results; --split alternate
    # without --samples was ignored without a word.
    data = _dataset(tmp_path / "data.npz")
    argv = ["wg", "evaluate", "--data", str(data), "--methods", "performance_knn,performance_knn"]
    assert main([*argv, "--partitions", "kernel,kernel", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["results"]
    assert only["partition"] == "kernel" and only["method"] == "performance_knn"
    assert "--split chooses how --samples" in _refused([*argv, "--split", "alternate"], capsys)


def test_collect_stopped_by_max_time_says_what_it_skipped(tmp_path, capsys):
    # --json said nothing of the scenarios --max-time left out.
    argv = ["wg", "collect", "--scenarios", "2", "--sizes", "64", "--no-real-world",
            "--max-border", "0", "--max-time", "1e-9", "--db", str(tmp_path / "c.db"), "--json"]  # fmt: skip
    assert main(argv) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert len(json.loads(line)["skipped"]) == 2


def test_plots_without_matplotlib_is_refused_before_the_evaluation(tmp_path, capsys, monkeypatch):
    # The whole evaluation ran (22 s on the shipped data) before the missing extra was named.
    import sys

    import perfport.wg

    def never(*args, **kwargs):
        raise AssertionError("evaluated before --plots was checked")

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plots extra were missing
    monkeypatch.setattr(perfport.wg, "evaluate", never)
    argv = ["wg", "evaluate", "--data", _dataset(tmp_path / "data.npz"), "--plots", tmp_path / "p"]
    assert "pip install 'perfport[plots]'" in _refused(argv, capsys)


def test_the_model_options_say_a_model_file_runs_code():
    # A model file is a pickle after a magic header: --model runs whatever it holds, and
    # only docs/wg.md said so.
    import argparse

    from perfport.cli import _parser

    def sub(parser, name):
        (choices,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return choices.choices[name]

    root = _parser()
    for command in (sub(sub(root, "wg"), "predict"), sub(root, "serve")):
        (model,) = [a for a in command._actions if "--model" in a.option_strings]
        assert "runs code when loaded" in model.help and "trust" in model.help


def _described_campaign(store, cpu):
    """A complete campaign of a described stencil (what 'perfport tune box.json' stores)."""
    from perfport import Measurement, Outcome
    from perfport.kernels import described_stencil
    from perfport.space import kernel_space
    from perfport.store import CampaignStatus

    spec = described_stencil({"name": "box", "body": "return GET(0, 0);"})
    full = spec.problem.merged({"width": 64, "height": 64})
    space = kernel_space(spec, full, cpu)
    ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(full))
    campaign = store.open_campaign("box", ids, "brute_force", 0, {}, space.report)
    configs = [c for c in space if c["wc"] in (8, 16) and c["wr"] in (4, 8)]
    store.record_many(campaign, [Measurement(c, Outcome.OK, times_ms=(1.0,)) for c in configs])
    store.set_status(campaign, CampaignStatus.COMPLETE)


def test_a_store_without_stencil_campaigns_is_skipped_with_a_note(tmp_path, capsys, cpu):
    # One store without a stencil campaign failed the whole dataset. A described stencil's
    # campaigns were dropped without a word; now they are read (tests/wg/test_wg_described.py).
    from conftest import fill_wg_campaign
    from perfport.store import Store

    full, tuned, empty = tmp_path / "col.db", tmp_path / "tune.db", tmp_path / "empty.db"
    with Store(full) as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
    with Store(tuned) as store:
        _described_campaign(store, cpu)
    Store(empty).close()
    out = tmp_path / "col2.npz"
    assert main(["wg", "dataset", "--db", str(full), "--db", str(tuned), "--db", str(empty),
                 "--out", str(out), "--json"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["scenarios"] == 2 and summary["skipped_stores"] == [str(empty)]
    assert summary["left_out"] == {} and summary["described_stencils"] == ["box"]
    assert captured.err == f"perfport: note: {empty} holds no complete stencil campaign; skipped\n"
    assert load_dataset(out).kernel.tolist() == ["heat", "box"]
    with sqlite3.connect(tuned) as conn:  # its description lost: nothing left to read
        conn.execute("UPDATE kernels SET spec = '{}' WHERE name = 'box'")
    conn.close()
    err = _refused(["wg", "dataset", "--db", tuned, "--db", empty, "--out", tmp_path / "no.npz"],
                   capsys)  # fmt: skip
    assert f"no stored stencil campaign in {tuned}, {empty}" in err
    assert "box: cannot rebuild it" in err  # every store empty: one error naming them
