"""The benchmarks' stored-runs files: which runs are read, and which the first file keeps."""

from __future__ import annotations

from pathlib import Path

from conftest import load_benchmark


def test_later_files_win_and_the_first_keeps_only_its_own(tmp_path: Path) -> None:
    bench = load_benchmark("strategies")
    first, archive = tmp_path / "new.json.gz", tmp_path / "archive.json"
    bench.write_runs(first, {"a": [1.0], "b": [2.0]})
    bench.write_runs(archive, {"b": [3.0], "c": [4.0]})
    runs, own = bench.load_runs([first, archive, tmp_path / "absent.json.gz"])
    assert runs == {"a": [1.0], "b": [3.0], "c": [4.0]}
    assert own == {"a": [1.0], "b": [2.0]}  # what the first file is written back with
    runs["d"] = [5.0]
    assert "d" not in own  # the two are separate: reading more never adds to the first file


def test_a_missing_first_file_owns_nothing(tmp_path: Path) -> None:
    bench = load_benchmark("strategies")
    bench.write_runs(tmp_path / "old.json", {"a": [1.0]})
    runs, own = bench.load_runs([tmp_path / "new.json.gz", tmp_path / "old.json"])
    assert runs == {"a": [1.0]} and own == {}
