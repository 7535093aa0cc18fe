"""ruff's lint and format checks, so style problems fail CI like any other test."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PATHS = ["src", "tests", "examples", "benchmarks"]


@pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None, reason="ruff not installed (it is in the test extra)"
)
@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff(command):
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *PATHS], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
