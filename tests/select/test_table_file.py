"""The gzip CSV table as users write it, and --data told apart by content, not by name."""

from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest

from perfport.cli import main
from perfport.select import PerfTable, SelectError, load_csv, save_csv


def _write(path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode()))


def test_true_and_false_problem_values_are_one_and_zero_as_from_a_store(tmp_path):
    """A flag column (trans_a) was refused: 'problem values must be numbers'."""
    path = tmp_path / "t.csv.gz"
    _write(path, "problem.M,problem.trans_a,config.wg,time_ms\n"
                 "64,true,8,1.5\n64,false,8,2.5\n128,true,8,3.5\n")  # fmt: skip
    table = load_csv(path)
    assert table.problem_names == ("M", "trans_a")
    assert table.problems.tolist() == [[64, 1], [64, 0], [128, 1]]
    kept = load_csv(path, {"trans_a": True})
    assert kept.problems[:, 0].tolist() == [64, 128]


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf"])
def test_a_problem_value_that_is_no_finite_number_names_its_file_and_line(tmp_path, cell):
    """The error was 'problem values must be finite numbers', with no file or line."""
    path = tmp_path / "t.csv.gz"
    _write(path, f"problem.M,config.wg,time_ms\n64,8,1.5\n{cell},8,2.5\n")
    with pytest.raises(SelectError, match=rf"t\.csv\.gz: line 3: .*finite numbers, not M={cell}$"):
        load_csv(path)


def _two_problem_table() -> PerfTable:
    return PerfTable(
        problem_names=("M",), problems=np.array([[64.0], [128.0]]), param_names=("wg",),
        configs=((8,), (16,)), times=np.array([[1.0, 2.0], [2.0, 1.0]]), device="GPU",
        kernel="k",
    )  # fmt: skip


def test_a_table_named_db_is_read_as_a_table(tmp_path, capsys):
    """It was opened as a store: a database error that named --db, an option select fit lacks."""
    path = tmp_path / "table.db"
    save_csv(_two_problem_table(), path)
    argv = ["select", "fit", "--data", str(path), "--kernels", "1", "--out", str(tmp_path / "b")]
    assert main(argv) == 0, capsys.readouterr().err


def test_a_store_with_another_name_is_read_as_a_store(tmp_path, capsys, db):
    """A store named results.sqlite was 'not a gzip CSV table'."""
    from perfport import Config, Measurement, Outcome, builtin
    from perfport.space import PruningReport
    from perfport.store import Store
    from perfport.store.formats.imported import external_device

    spec = builtin("vector_add")
    with Store(db) as store:
        for n, wg, ms in ((256, 64, 1.0), (256, 128, 2.0), (4096, 64, 2.0), (4096, 128, 1.0)):
            problem = spec.problem.merged({"n": n})
            ids = (store.device_id(external_device("GPU")), store.kernel_id(spec),
                   store.problem_id(problem))  # fmt: skip
            campaign = store.open_campaign(f"c{n}", ids, "brute_force", 0, {},
                                           PruningReport(1, 1, ()))  # fmt: skip
            store.record(campaign, Measurement(Config.of(wg=wg), Outcome.OK, times_ms=(ms, ms)))
    renamed = tmp_path / "results.sqlite"
    shutil.copy(db, renamed)
    argv = ["select", "fit", "--data", str(renamed), "--kernel", "vector_add", "--kernels", "1",
            "--out", str(tmp_path / "b")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
