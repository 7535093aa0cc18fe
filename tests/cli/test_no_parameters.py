"""A kernel with nothing to tune: its one configuration is the default, and every table shows
it (tune's table raised a TypeError on the empty configuration; results showed no default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfport.cli import main

SOURCE = "__kernel void scale(__global const float* x, __global float* y, int n) {\n" \
         "  int i = get_global_id(0); if (i < n) y[i] = 2.0f * x[i];\n}\n"  # fmt: skip
SPEC = """name = "scale"
entry = "scale"
source_file = "scale.cl"
global_size = ["n"]
local_size = ["16"]
args = [
  { kind = "array", name = "x", dtype = "float", shape = ["n"] },
  { kind = "array", name = "y", dtype = "float", shape = ["n"], output = true },
  { kind = "scalar", name = "n", dtype = "int", value = "n" },
]

[problem]
n = 256
"""


def test_a_kernel_without_parameters_tunes_and_reports_its_one_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scale.cl").write_text(SOURCE)
    (tmp_path / "scale.toml").write_text(SPEC)
    db = tmp_path / "r.db"
    assert main(["tune", str(tmp_path / "scale.toml"), "--db", str(db), "--confirm", "0"]) == 0
    out = capsys.readouterr().out
    assert "(no parameters)" in out and "faster than" not in out
    assert main(["results", "--db", str(db)]) == 0
    assert "(no parameters)" in capsys.readouterr().out
    assert main(["results", "--db", str(db), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert row["best"]["config"] == {} and row["default"]["config"] == {}
    assert row["speedup_over_default"] == 1.0
