"""A measurement file's bad rows are refused, naming the file, the line and the value: a time
that is not a finite number of ms > 0 was read as inf (nan% errors) or dropped (a variant lost
a size), a missing time column said the data had no application measurements, and a problem
whose sizes are not integers said 'loopy cannot build' with no line."""

from __future__ import annotations

import re

import pytest

from perfport.cli import main
from perfport.model import ModelError
from perfport.model.dataset import read_data

HEADER = "device,device_fingerprint,kernel,problem,time_ms\n"
GOOD = 'X,ff,app-matmul-prefetch,"{""n"": 128}",2.5\n'


@pytest.mark.parametrize("time", ["inf", "nan", "-3.0", "0", "", "-inf"])
def test_a_time_that_is_not_a_finite_positive_number_is_named(tmp_path, time):
    path = tmp_path / "d.csv"
    path.write_text(HEADER + GOOD + f'X,ff,app-matmul-prefetch,"{{""n"": 256}}",{time}\n')
    with pytest.raises(ModelError, match=rf"d\.csv, line 3: a bad value \(time_ms '{time}'"):
        read_data(path)


def test_a_json_time_of_null_is_named_by_its_row(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[{"device": "X", "kernel": "mk-empty_kernel", "problem": {"n": 4}, '
                    '"median_ms": null}]')  # fmt: skip
    with pytest.raises(ModelError, match=r"row 1: a bad value \(median_ms null"):
        read_data(path)


def test_a_failed_measurement_with_its_outcome_is_skipped(tmp_path):
    # perfport export writes a failed run with its outcome and no time: not data, not an error
    path = tmp_path / "d.csv"
    path.write_text("device,device_fingerprint,kernel,problem,median_ms,outcome\n"
                    'X,ff,app-matmul-prefetch,"{""n"": 128}",2.5,ok\n'
                    'X,ff,app-matmul-prefetch,"{""n"": 256}",,failed\n')  # fmt: skip
    assert [dict(r.problem) for r in read_data(path)] == [{"n": 128}]


def test_no_time_column_is_named(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text('device,device_fingerprint,kernel,problem\nX,ff,app-matmul-prefetch,"{}"\n')
    assert main(["model", "evaluate", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 2: no 'time_ms' (or 'median_ms') field" in err and err.count("\n") == 1


@pytest.mark.parametrize("problem", ['{""n"": ""abc""}', '{""dtype"": ""float32"", ""n"": 4}'])
def test_an_application_size_that_is_not_an_integer_is_named(tmp_path, capsys, problem):
    path = tmp_path / "d.csv"
    path.write_text(HEADER + GOOD + f'X,ff,app-matmul-prefetch,"{problem}",2.5\n')
    assert main(["model", "evaluate", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert "d.csv, line 3: problem " in err and "is not an integer" in err
    assert err.count("\n") == 1


def test_an_application_row_without_the_kernels_size_is_named(tmp_path):
    pytest.importorskip("loopy")
    from perfport.model import StatsCache
    from perfport.model.dataset import KernelFeatures

    path = tmp_path / "d.csv"
    path.write_text(HEADER + GOOD + 'X,ff,app-matmul-prefetch,"{""m"": 128}",2.5\n')
    features = KernelFeatures(StatsCache(tmp_path / "cache"))
    with pytest.raises(ModelError, match=r"line 3: app-matmul-prefetch .*no size m; its sizes"):
        features.usable(read_data(path))


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ('X,ff,app-matmul-prefetch,"{""n"": 100}",2.5',
         r'line 3: app-matmul-prefetch {"n": 100}: n=100 is outside the assumptions'),
        ('X,ff,app-matmul-prefetch,"{""n"": 0}",2.5', r"line 3: problem n=0 is not 1 or more"),
        ('X,ff,app-matmul-prefetch,"{""n"": -128}",2.5',
         r"line 3: problem n=-128 is not 1 or more"),
        ('X,ff,mk-empty_kernel,"{""lsize_0"": 256, ""ngroups"": 0}",0.01',
         r'line 3: mk-empty_kernel {"lsize_0": 256, "ngroups": 0}: ngroups=0 is outside'),
    ],
)  # fmt: skip
def test_a_row_outside_its_kernel_s_assumptions_is_named_by_its_line(tmp_path, capsys, row, says):
    # It was refused in loopy's words, naming loopy's kernel (matmul, perfport_mk_empty) and
    # neither the file, the line nor the row's kernel.
    pytest.importorskip("loopy")
    path = tmp_path / "d.csv"
    path.write_text(HEADER + GOOD + row + "\n")
    assert main(["model", "evaluate", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert re.search(re.escape(str(path)) + ", " + says.replace("{", r"\{"), err), err
    assert err.count("\n") == 1
