"""docs/model.md's worked example runs as written and recovers the costs it chose."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from model_support import LOOPY

DOC = Path(__file__).parents[2] / "docs" / "model.md"

pytest.importorskip("loopy", reason=LOOPY)


def test_the_worked_example_runs(tmp_path):
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[-1]
    assert "calibrate(" in block and "predict(" in block
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", block],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, predicted = done.stdout.splitlines()[:2]
    assert first.endswith("True") and predicted.endswith(" ms")
    assert (tmp_path / "calibration.json").is_file()
