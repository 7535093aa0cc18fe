"""Bad input found by a sweep of the whole command line: each is one line on stderr, exit 2,
no traceback, and the results database is left byte for byte as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfport.cli import main
from perfport.store import Store

EXAMPLES = Path(__file__).parents[2] / "examples"
SHIPPED = Path(__file__).parents[2] / "src" / "perfport" / "datasets"
JUNK = bytes(range(128, 256)) * 4  # not UTF-8: what a binary file given by mistake holds


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([str(a) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty perfport store (what a first `perfport tune` leaves before its results)."""
    path = tmp_path / "r.db"
    Store(path).close()
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["export", "--output", "{db}"],
        ["select", "export", "--out", "{db}"],
        ["wg", "dataset", "--merge", SHIPPED / "wg" / "stencils.npz", "--out", "{db}"],
        ["wg", "train", "--data", SHIPPED / "wg" / "stencils.npz", "--out", "{db}"],
        ["model", "calibrate", SHIPPED / "model" / "matmul-linear.json", "--out", "{db}"],
        ["model", "evaluate", "--write-data", "{db}"],
    ],
)
def test_an_output_file_never_overwrites_a_results_database(store, capsys, command):
    """`perfport export --output perfport.db` truncated the store it read to a CSV file."""
    before = store.read_bytes()
    args = [str(store) if a == "{db}" else a for a in command]
    if command[0] in ("export", "select"):
        args += ["--db", str(store)]
    err = _refused(args, capsys)
    assert "is a results database" in err and "give another path" in err
    assert store.read_bytes() == before


@pytest.mark.parametrize("narrowed", [[], ["--kernel", "nosuch"]])
def test_results_with_nothing_to_show_says_so_in_one_line(store, capsys, narrowed):
    """An empty store, or a --kernel that matches nothing, was a TypeError traceback from
    sizing the table's columns over no rows."""
    assert main(["results", "--db", str(store), *narrowed]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.count("\n") == 1
    assert captured.out.startswith(f"no results in {store}")
    assert ("--kernel 'nosuch'" in captured.out) == bool(narrowed)
    assert main(["results", "--db", str(store), *narrowed, "--json"]) == 0
    assert capsys.readouterr().out.split() == ["{", '"results":', "[]", "}"]
