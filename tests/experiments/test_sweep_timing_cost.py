"""experiments/2026-11-23-lawson-gemm-recheck/sweep_timing_cost.py: the sweep's old and new timing side by side."""

from __future__ import annotations

import json

from conftest import load_experiment

module = load_experiment("sweep_timing_cost")


def test_largest_problems_by_the_product_of_their_values():
    problems = [
        {"n": 4, "m": 8, "dtype": "float"},
        {"n": 64, "m": 1},
        {"n": 16, "m": 16, "t": False},
    ]
    assert module.largest(problems, 2) == [{"n": 16, "m": 16, "t": False}, {"n": 64, "m": 1}]


def test_both_timings_on_the_test_device(cpu, tmp_path, capsys):
    problems = tmp_path / "p.csv"
    problems.write_text("n\n4096\n65536\n1024\n")
    argv = ["--kernel", "vector_add", "--problems", str(problems), "--largest", "2",
            "--device", cpu.id, "--json"]  # fmt: skip
    assert module.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] == 2 and report["configurations"] > 0
    assert report["seconds"]["single"] > 0 and report["seconds"]["median_of_3"] > 0
    assert report["ratio"] > 0
