"""experiments/2026-11-23-lawson-gemm-recheck/select_recheck.py: re-measuring a sweep table's single-launch cells."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from conftest import load_experiment
from perfport.select import PerfTable, load_csv
from perfport.select.table_file import save_csv

module = load_experiment("select_recheck")

PROBLEMS = ("K", "M", "N", "batch", "trans_a", "trans_b")
PARAMS = ("row_tile", "acc_tile", "col_tile", "wg_rows", "wg_cols")
CONFIGS = ((1, 1, 1, 8, 8), (2, 2, 2, 8, 8), (1, 1, 1, 16, 8))


def _table(device: str) -> PerfTable:
    problems = np.array([[16, 32, 32, 1, 0, 0], [32, 16, 64, 2, 1, 0]], dtype=float)
    times = np.array([[5.0, 0.5, np.nan], [0.2, 7.0, 3.0]])
    return PerfTable(PROBLEMS, problems, PARAMS, CONFIGS, times, device, "matmul")


def test_single_launch_cells_are_those_at_or_over_the_threshold():
    assert module.single_launch_cells(_table("x"), 3.0) == {0: [0], 1: [1, 2]}
    assert module.single_launch_cells(_table("x"), 10.0) == {}


def test_a_cell_becomes_the_median_of_three_and_a_failure_keeps_the_sweep_time(tmp_path):
    recheck = tmp_path / "recheck.csv"
    recheck.write_text(
        "row,config,sweep_ms,new_ms\n0,0,5,1.0 1.2\n1,1,7,6.5 9\n1,2,3,runtime_error\n"
    )
    patched, moves = module.patched(_table("x"), recheck)
    assert patched.times[0, 0] == pytest.approx(1.2)  # one hiccup in the sweep is outvoted
    assert patched.times[1, 1] == pytest.approx(7.0)
    assert patched.times[1, 2] == 3.0 and np.isnan(patched.times[0, 2])
    assert [(m["row"], m["col"]) for m in moves] == [(0, 0), (1, 1)]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("0,0,4.9,1.0 1.2", "belongs to another table"),  # the table has 5 ms there
        ("0,7,5,1.0 1.2", "outside the table"),
        ("-1,0,5,1.0 1.2", "outside the table"),
        ("0,0,5,1.0", "1 new samples, expected 2"),
        ("x,0,5,1.0 1.2", "must be numbers"),
    ],
)
def test_apply_refuses_a_file_that_does_not_fit_the_table(tmp_path, line, error):
    recheck = tmp_path / "recheck.csv"
    recheck.write_text(f"row,config,sweep_ms,new_ms\n{line}\n")
    with pytest.raises(SystemExit, match=error):
        module.patched(_table("x"), recheck)
    recheck.write_text("row,cfg\n0,0\n")
    with pytest.raises(SystemExit, match="columns"):
        module.patched(_table("x"), recheck)


def test_applying_twice_gives_the_same_table(tmp_path):
    recheck = tmp_path / "recheck.csv"
    recheck.write_text("row,config,sweep_ms,new_ms\n0,0,5,1.0 1.2\n1,1,7,6.5 9\n")
    once, _ = module.patched(_table("x"), recheck)
    twice, _ = module.patched(once, recheck)
    np.testing.assert_array_equal(once.times, twice.times)


def test_resume_measures_a_partial_problem_again(tmp_path):
    cells = {0: [0], 1: [1, 2]}
    out = tmp_path / "re.csv"
    out.write_text("")  # killed before anything was written
    assert module._complete(out, cells) == set()
    assert out.read_text().startswith("row,config")
    out.write_text("row,config,sweep_ms,new_ms\n0,0,5,1 1\n1,1,7,6 6\n")  # problem 1 half done
    assert module._complete(out, cells) == {0}
    assert out.read_text().splitlines() == ["row,config,sweep_ms,new_ms", "0,0,5,1 1"]


def test_measure_then_apply_on_the_test_device(cpu, tmp_path, capsys):
    data, out, fixed = tmp_path / "t.csv.gz", tmp_path / "re.csv", tmp_path / "p.csv.gz"
    save_csv(_table(cpu.name), data)
    argv = ["measure", "--data", str(data), "--device", cpu.id, "--out", str(out)]
    assert module.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["problems_measured"] == 2
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["row"], r["config"]) for r in rows] == [("0", "0"), ("1", "1"), ("1", "2")]
    assert all(len(r["new_ms"].split()) == 2 for r in rows)
    assert module.main(argv) == 0  # resumes: nothing left to measure
    with out.open(newline="") as f:
        assert len(list(csv.DictReader(f))) == 3
    assert module.main(["apply", "--data", str(data), "--recheck", str(out),
                        "--out", str(fixed), "--json"]) == 0  # fmt: skip
    table = load_csv(fixed)
    assert np.isfinite(table.times[0, 0]) and table.times[0, 1] == 0.5


def test_measure_refuses_a_table_of_another_device(cpu, tmp_path):
    data = tmp_path / "t.csv.gz"
    save_csv(_table("Some Other GPU"), data)
    with pytest.raises(SystemExit, match="measured on Some Other GPU"):
        module.main(["measure", "--data", str(data), "--device", cpu.id,
                     "--out", str(tmp_path / "re.csv")])  # fmt: skip
