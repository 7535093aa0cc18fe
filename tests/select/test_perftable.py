"""PerfTable: validation, subsets, the gzip CSV format and loading from a perfport store."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import Backend, DeviceInfo, DeviceType, PerfportError
from perfport.select import PerfTable, SelectError, from_store, load_csv, save_csv
from perfport.space import PruningReport
from perfport.store import Store
from perfport.tune import sweep


def _table() -> PerfTable:
    return PerfTable(
        problem_names=("M", "N", "trans_a"),
        problems=np.array([[64, 32, 0], [4096, 512, 1], [128, 128, 0]]),
        param_names=("tile", "wg", "layout"),
        configs=((1, 64, "row"), (2, 64, "row"), (4, 128, "col")),
        times=np.array([[1.5, 0.75, np.nan], [10.0, 12.25, 9.0], [np.nan, np.nan, np.nan]]),
        device="Fake GPU",
        kernel="matmul",
    )


def test_table_is_read_only_and_indexable():
    t = _table()
    assert (t.n_problems, t.n_configs) == (3, 3)
    assert t.config_dict(2) == {"tile": 4, "wg": 128, "layout": "col"}
    assert t.config_index({"tile": 2, "wg": 64, "layout": "row"}) == 1
    assert t.problem_dict(1) == {"M": 4096.0, "N": 512.0, "trans_a": 1.0}
    with pytest.raises(ValueError):
        t.times[0, 0] = 3.0  # shared arrays cannot be changed behind the table's back
    sub = t.subset([2, 0])
    assert sub.problems[:, 0].tolist() == [128, 64]
    assert np.isnan(sub.times[0]).all() and sub.times[1, 1] == 0.75
    assert t.subset(np.array([False, True, False])).problems.tolist() == [[4096, 512, 1]]
    with pytest.raises(SelectError, match="not in the table"):
        t.config_index((8, 8, "row"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"times": np.ones((3, 2))}, "expected 3 problems x 3 configurations"),
        ({"problem_names": ("M", "N")}, "3 columns for 2 problem names"),
        ({"configs": ((1, 64, "row"), (1, 64, "row"), (4, 128, "col"))}, "distinct"),
        ({"times": -np.ones((3, 3))}, "positive"),
    ],
)
def test_table_rejects_inconsistent_input(change, message):
    t = _table()
    fields = {n: getattr(t, n) for n in ("problem_names", "problems", "param_names", "configs")}
    fields["times"] = t.times
    with pytest.raises(SelectError, match=message):
        PerfTable(**{**fields, **change})


def test_csv_round_trip_is_deterministic(tmp_path):
    t = _table()
    a, b = tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"
    save_csv(t, a)
    save_csv(t, b)
    assert a.read_bytes() == b.read_bytes()  # no timestamp or file name in the gzip header
    back = load_csv(a)
    assert back.problem_names == t.problem_names and back.param_names == t.param_names
    assert back.configs == t.configs and (back.device, back.kernel) == ("Fake GPU", "matmul")
    np.testing.assert_array_equal(back.problems, t.problems)
    np.testing.assert_allclose(back.times, t.times, rtol=1e-4)  # NaN where NaN
    text = gzip.decompress(a.read_bytes()).decode()
    assert "problem.M,problem.N,problem.trans_a,config.tile,config.wg,config.layout,time_ms" in text
    assert text.count("\n") == 3 + 1 + 9  # comments, header, one row per problem x config


def _write(path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode()))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("problem.M,config.wg\n1,2\n", "time_ms"),
        ("problem.M,time_ms\n1,2\n", "config"),
        ("problem.M,config.wg,time_ms,extra\n1,2,3,4\n", "unknown columns"),
        ("problem.M,config.wg,time_ms\n1,2,fast\n", "line 2: time_ms 'fast' is not a number"),
        ("problem.M,config.wg,time_ms\n1,2,-1\n", "positive"),
        ("problem.M,config.wg,time_ms\n1,2,nan\n", "empty where nothing ran"),
        # One value everywhere that is not a number is dropped (as from_store drops dtype).
        ("problem.M,config.wg,time_ms\n1,2,1\nbig,2,1\n", "line 3: problem values must be numbers"),
        ("problem.M,config.wg,time_ms\n1,2\n", "line 2 has 2 fields for 3 columns"),
        ("problem.M,config.wg,time_ms\n1,2,3\n1,2,4\n", "line 3 repeats"),
        # Values, not their spelling: 16.0 is 16, so line 3 repeats line 2.
        ("problem.M,config.wg,time_ms\n1,16,3\n1.0,16.0,4\n", "line 3 repeats"),
        # The table is read column by column: the fault on the earliest line is named.
        ("problem.M,config.wg,time_ms\n1,2,3\n1,2,4\nbig,2,-1\n", "line 3 repeats"),
        ("problem.M,config.wg,time_ms\n1,2,3\n1,4,0\n1,2,4\nbig,5,1\n", "line 3: .*positive"),
        ("problem.M,config.wg,time_ms\n1,2,3\nbig,2,x\n", "line 3: problem values"),
        ("problem.M,config.wg,time_ms\n1,2,3\n2,2,x\nbig,2,1\n", "line 3: time_ms 'x'"),
        ("problem.M,config.wg,time_ms\n", "no rows"),
        ("# only a comment\n", "no header"),
    ],
)
def test_malformed_csv_is_a_one_line_error(tmp_path, text, message):
    path = tmp_path / "bad.csv.gz"
    _write(path, text)
    with pytest.raises(SelectError, match=message) as info:
        load_csv(path)
    assert "\n" not in str(info.value)


def test_csv_that_is_not_gzip_or_missing(tmp_path):
    plain = tmp_path / "plain.csv.gz"
    plain.write_text("problem.M,config.wg,time_ms\n1,2,3\n")
    with pytest.raises(SelectError, match="not a gzip CSV"):
        load_csv(plain)
    with pytest.raises(SelectError, match="no table file"):
        load_csv(tmp_path / "absent.csv.gz")


# ---- stores ----------------------------------------------------------------------------------


def _device(name: str) -> DeviceInfo:
    return DeviceInfo(
        id="opencl:9:0", backend=Backend.OPENCL, name=name, vendor="Fake", type=DeviceType.GPU,
        driver="1.0", platform="Fake CL", version="OpenCL 3.0", compute_units=8,
        max_work_group_size=256, max_work_item_sizes=(256, 256, 64), local_mem_bytes=65536,
        global_mem_bytes=1 << 30,
    )  # fmt: skip


def _fill(store: Store, device: DeviceInfo, kernel: str, rows) -> None:
    """rows: (problem dict, config dict, median ms or None for a failure, campaign suffix)."""
    spec = builtin(kernel)
    for problem, config, ms, suffix in rows:
        full = spec.problem.merged(problem)
        ids = (store.device_id(device), store.kernel_id(spec), store.problem_id(full))
        key = f"{device.name}-{kernel}-{full.key}-{suffix}"
        campaign = store.open_campaign(key, ids, "brute_force", 0, {}, PruningReport(1, 1, ()))
        m = (
            Measurement(Config.of(config), Outcome.OK, times_ms=(ms, ms))
            if ms is not None
            else Measurement(Config.of(config), Outcome.LAUNCH_REFUSED, "refused")
        )
        store.record(campaign, m)


_SMALL = {"M": 64, "N": 64, "K": 64}
_LARGE = {"M": 512, "N": 256, "K": 128, "trans_b": True}
_C1 = {"row_tile": 1, "acc_tile": 1, "col_tile": 1, "wg_rows": 8, "wg_cols": 8}
_C2 = {"row_tile": 4, "acc_tile": 4, "col_tile": 4, "wg_rows": 16, "wg_cols": 16}


def test_from_store_builds_a_dense_table(db):
    with Store(db) as store:
        _fill(
            store, _device("GPU A"), "matmul",
            [(_LARGE, _C1, 4.0, "a"), (_LARGE, _C2, 2.0, "a"), (_LARGE, _C2, 1.5, "b"),
             (_SMALL, _C1, 0.5, "a"), (_SMALL, _C2, None, "a")],
        )  # fmt: skip
    t = from_store(db)
    assert t.device == "GPU A" and t.kernel == "matmul"
    # What never varies (dtype, batch, trans_a) is no feature but the problem measured at;
    # booleans become 0/1
    assert t.problem_names == ("K", "M", "N", "trans_b")
    assert t.fixed == {"batch": 1, "dtype": "float", "trans_a": False}
    assert t.param_names == ("row_tile", "acc_tile", "col_tile", "wg_rows", "wg_cols")
    assert t.problems.tolist() == [[64, 64, 64, 0], [128, 512, 256, 1]]
    assert t.configs == ((1, 1, 1, 8, 8), (4, 4, 4, 16, 16))
    small, large = t.times
    assert small[0] == 0.5 and np.isnan(small[1])  # refused -> NaN
    assert large.tolist() == [4.0, 1.5]  # the faster of two campaigns


def test_an_export_keeps_the_fixed_problem_values(db, tmp_path):
    # 'select export' wrote only the features: a table fitted from the CSV lost fixed_problem
    # (the problem legal() checks at), and the file lacked columns older exports had.
    with Store(db) as store:
        _fill(store, _device("GPU A"), "matmul",
              [(_LARGE, _C1, 4.0, "a"), (_LARGE, _C2, 2.0, "a"), (_SMALL, _C1, 0.5, "a")])  # fmt: skip
    t = from_store(db)
    path = tmp_path / "t.csv.gz"
    save_csv(t, path)
    with gzip.open(path, "rt") as f:
        header = next(line for line in f if not line.startswith("#"))
    assert header.startswith("problem.K,problem.M,problem.N,problem.trans_b,problem.batch,"
                             "problem.dtype,problem.trans_a,config.")  # fmt: skip
    back = load_csv(path)
    assert back.fixed == t.fixed == {"batch": 1, "dtype": "float", "trans_a": False}
    assert back.problem_names == t.problem_names and back.problems.tolist() == t.problems.tolist()
    assert back.configs == t.configs and np.array_equal(back.times, t.times, equal_nan=True)


def test_a_wrong_result_in_any_campaign_is_a_failure_not_a_time(db, tmp_path, capsys):
    # A verified campaign found _C1 wrong; an unverified one timed it fast. The table took the
    # fastest ok median, so 'select fit' shipped the configuration 'results' ranks as wrong.
    from perfport.cli import main

    device, spec = _device("GPU A"), builtin("matmul")
    full = spec.problem.merged(_SMALL)
    with Store(db) as store:
        ids = (store.device_id(device), store.kernel_id(spec), store.problem_id(full))
        for key, wrong_ms in (("checked", None), ("unchecked", 0.1)):
            campaign = store.open_campaign(key, ids, "brute_force", 0, {}, PruningReport(1, 1, ()))
            store.record(campaign, Measurement(Config.of(_C2), Outcome.OK, times_ms=(2.0, 2.0)))
            store.record(campaign, Measurement(Config.of(_C1), Outcome.WRONG_RESULT, "differs")
                         if wrong_ms is None
                         else Measurement(Config.of(_C1), Outcome.OK, times_ms=(0.1, 0.1)))  # fmt: skip
    t = from_store(db)
    assert t.configs == ((1, 1, 1, 8, 8), (4, 4, 4, 16, 16))
    assert np.isnan(t.times[0, 0]) and t.times[0, 1] == 2.0
    out = tmp_path / "bundle"
    assert main(["select", "fit", "--data", str(db), "--kernels", "1", "--out", str(out),
                 "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["configs"] == [_C2]


def test_from_store_refuses_to_mix_devices_or_kernels(db):
    with Store(db) as store:
        _fill(store, _device("GPU A"), "matmul", [(_SMALL, _C1, 1.0, "a")])
        _fill(store, _device("GPU B"), "matmul", [(_SMALL, _C1, 2.0, "a")])
        _fill(store, _device("GPU A"), "vector_add", [({"n": 256}, {"wg": 64}, 1.0, "a")])
    with pytest.raises(SelectError, match=r"2 devices .*GPU A.*GPU B.*--device") as info:
        from_store(db, kernel="matmul")
    assert "\n" not in str(info.value) and isinstance(info.value, PerfportError)
    with pytest.raises(SelectError, match=r"2 kernels .*matmul.*vector_add.*--kernel"):
        from_store(db, device="GPU A")
    assert from_store(db, kernel="matmul", device="GPU B").times.tolist() == [[2.0]]
    assert from_store(db, kernel="vector_add").param_names == ("wg",)
    with pytest.raises(SelectError, match="no results"):
        from_store(db, kernel="convolution")
    with pytest.raises(SelectError, match="no store"):
        from_store(db.parent / "absent.db")


def test_a_device_is_chosen_by_its_id_as_results_chooses_it(db, cpu, tmp_path, capsys):
    # 'select export --device opencl:0:0' said the store had no results: the id was matched
    # as a name, where results, export, report and replay look up its fingerprint.
    from perfport.cli import main

    with Store(db) as store:
        _fill(store, cpu, "matmul", [(_SMALL, _C1, 1.0, "a")])
        _fill(store, _device("GPU B"), "matmul", [(_SMALL, _C1, 2.0, "a")])
    assert from_store(db, device=cpu.id).times.tolist() == [[1.0]]
    out = tmp_path / "t.csv.gz"
    assert main(["select", "export", "--db", str(db), "--device", cpu.id, "--out", str(out),
                 "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["device"] == cpu.name


def test_from_a_real_sweep(db, cpu, tmp_path):
    problems = [{"n": 4096}, {"n": 256}]
    done = list(sweep("vector_add", problems, device=cpu, db=db))
    assert len(done) == 2
    t = from_store(db)
    assert t.kernel == "vector_add" and t.device == cpu.name
    assert t.problem_names == ("n",) and t.problems[:, 0].tolist() == [256, 4096]
    assert t.param_names == ("wg",) and len(t.configs) == done[0].outcomes["ok"]
    assert np.isfinite(t.times).all() and (t.times > 0).all()
    save_csv(t, tmp_path / "t.csv.gz")
    np.testing.assert_allclose(load_csv(tmp_path / "t.csv.gz").times, t.times, rtol=1e-4)


def test_select_fit_and_evaluate_choose_within_a_store(db, tmp_path, capsys):
    # The error named --kernel, which fit and evaluate did not have (argparse read it as
    # --kernels).
    from perfport.cli import main

    with Store(db) as store:
        _fill(store, _device("GPU A"), "matmul", [(_SMALL, _C1, 1.0, "a"), (_SMALL, _C2, 2.0, "a")])
        _fill(store, _device("GPU A"), "vector_add", [({"n": 256}, {"wg": 64}, 1.0, "a")])
    out = tmp_path / "bundle"
    argv = ["select", "fit", "--data", str(db), "--kernels", "1", "--out", str(out)]
    assert main(argv) == 2 and "--kernel NAME" in capsys.readouterr().err
    assert main([*argv, "--kernel", "matmul", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["configs"] == [_C1]
    assert main(["select", "evaluate", "--kernel", "matmul"]) == 2
    assert "choose within a perfport store" in capsys.readouterr().err


def test_a_kernel_tuner_cache_given_as_a_table_names_portable(tmp_path, capsys):
    from perfport.cli import main

    cache = tmp_path / "cache.json.gz"  # as the hub ships them
    cache.write_bytes(gzip.compress(b'{"tune_params_keys": ["wg"], "cache": {}}\n'))
    assert main(["select", "evaluate", "--data", str(cache), "--kernels", "1"]) == 2
    err = capsys.readouterr().err
    assert "is JSON, not a table" in err and "select portable" in err


# ---- a problem value that is not a number ----------------------------------------------------


def test_a_problem_value_that_varies_is_chosen_with_problem(db, tmp_path, capsys):
    # It said "select one value's campaigns into a store of their own", which no command did.
    from perfport.cli import main

    double, large = {**_SMALL, "dtype": "double"}, {**_LARGE, "dtype": "double"}
    with Store(db) as store:
        _fill(store, _device("GPU A"), "matmul",
              [(_SMALL, _C1, 1.0, "a"), (_SMALL, _C2, 2.0, "a"),
               (_LARGE, _C1, 1.0, "a"), (_LARGE, _C2, 2.0, "a"),
               (double, _C1, 4.0, "a"), (double, _C2, 3.0, "a"),
               (large, _C1, 5.0, "a"), (large, _C2, 2.0, "a")])  # fmt: skip
    with pytest.raises(SelectError, match=r"'dtype' varies .* --problem dtype=(float|double)"):
        from_store(db)
    t = from_store(db, problem={"dtype": "double"})
    assert "dtype" not in t.problem_names and t.times.tolist() == [[4.0, 3.0], [5.0, 2.0]]
    assert t.fixed == {"batch": 1, "dtype": "double", "trans_a": False}
    assert from_store(db, problem={"dtype": "float", "M": 64.0}).times.tolist() == [[1.0, 2.0]]
    with pytest.raises(SelectError, match="matches no problem; give one of dtype's values"):
        from_store(db, problem={"dtype": "half"})
    with pytest.raises(SelectError, match="no problem has a value 'dtyp'"):
        from_store(db, problem={"dtyp": "float"})
    out = tmp_path / "bundle"
    fit = ["select", "fit", "--data", str(db), "--kernels", "1", "--out", str(out), "--json"]
    assert main(fit) == 2 and "--problem dtype=" in capsys.readouterr().err
    assert main([*fit, "--problem", "dtype=double"]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["configs"] == [_C2] and fitted["unchecked_rules"] == []
    # The generated legal() checks matmul's rules at the problem it was measured at.
    assert fitted["metadata"]["fixed_problem"] == {"batch": 1, "dtype": "double", "trans_a": False}
    evaluate = ["select", "evaluate", "--data", str(db), "--kernels", "1", "--json",
                "--classifiers", "decision_tree_a", "--prunings", "greedy"]  # fmt: skip
    assert main([*evaluate, "--problem", "dtype=float"]) == 0, capsys.readouterr().err


def test_a_table_keeps_one_value_of_a_column_that_is_not_a_number(tmp_path):
    path = tmp_path / "t.csv.gz"
    _write(path, "problem.M,problem.dtype,config.wg,time_ms\n1,float,2,3\n1,double,2,4\n")
    with pytest.raises(SelectError, match=r"line 2: .*not dtype=float; keep one value's rows "
                       r"with --problem dtype=float"):  # fmt: skip
        load_csv(path)
    t = load_csv(path, problem={"dtype": "double"})
    assert (
        t.problem_names == ("M",) and t.times.tolist() == [[4.0]] and t.fixed == {"dtype": "double"}
    )


def test_a_parameter_taking_both_1_and_true_has_two_columns():
    table = PerfTable(
        problem_names=("n",),
        problems=np.array([[64]]),
        param_names=("p",),
        configs=((1,), (True,)),
        times=np.array([[2.0, 1.0]]),
        device="Fake GPU",
        kernel="k",
    )
    assert table.config_index((True,)) == 1 and table.config_index({"p": 1}) == 0


def test_a_number_that_never_varies_is_no_feature(tmp_path):
    # A tree fitted with a constant column splits on values it never saw (a <= 1.76 where
    # a was always 1.5), so a problem's other value of it would flip the pick.
    path = tmp_path / "t.csv.gz"
    _write(path, "problem.a,problem.n,config.wg,time_ms\n1.5,64,2,3\n1.5,128,2,4\n")
    t = load_csv(path)
    assert t.problem_names == ("n",) and t.fixed == {"a": 1.5}
    _write(path, "problem.a,problem.n,config.wg,time_ms\n1.5,64,2,3\n")
    assert load_csv(path).problem_names == ("a", "n")  # one problem: nothing varies, all kept
