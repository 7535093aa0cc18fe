"""./dev test runs the default suite (slow tests deselected); ./dev test --slow runs them all."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.fixture
def checkout(tmp_path):
    """A copy of dev whose .venv is already set up: its python prints the arguments it got."""
    for name in ("dev", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    (tmp_path / ".ci").mkdir()
    shutil.copy2(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    python.chmod(0o755)
    checksum = subprocess.run(["cksum", "pyproject.toml"], cwd=tmp_path, capture_output=True,
                              text=True, check=True).stdout.split()[0]  # fmt: skip
    (tmp_path / ".venv" / f".installed-pocl,test-{checksum}").touch()
    return tmp_path


# Both cores of the 2-core machine the suite must pass on; a file's tests in one process.
PAR = ["-n", "2", "--dist", "loadfile"]


def _pytest_args(checkout, *command):
    done = subprocess.run([str(checkout / command[0]), *command[1:]], capture_output=True,
                          text=True, env=os.environ, check=True)  # fmt: skip
    return done.stdout.splitlines()


def test_default_suite_leaves_out_slow_tests(checkout):
    assert _pytest_args(checkout, "dev", "test") == ["-m", "pytest", "-q", "-m", "not slow", *PAR]
    assert _pytest_args(checkout, "dev", "test", "-x", "tests/cli") == [
        "-m", "pytest", "-q", "-m", "not slow", *PAR, "-x", "tests/cli"
    ]  # fmt: skip
    assert _pytest_args(checkout, ".ci/run") == _pytest_args(checkout, "dev", "test")


def test_slow_runs_everything(checkout):
    assert _pytest_args(checkout, "dev", "test", "--slow") == ["-m", "pytest", "-q", *PAR]
    slow_x = ["-m", "pytest", "-q", *PAR, "-x"]
    assert _pytest_args(checkout, "dev", "test", "--slow", "-x") == slow_x
