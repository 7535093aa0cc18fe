"""ruff's lint and format checks, so style problems fail CI like any other test."""

import ast
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


# The project's size limits: a module over 500 lines or a function over 80 hides seams that
# should be split. Functions already over the limit are listed with their
# length so they cannot grow; an entry is removed once its function is split.
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
KNOWN_LONG = {"src/perfport/measure/trial.py:run": 84}


def _function_lengths(path: Path) -> dict[str, int]:
    """Each function's lines, signature and docstring included; the longest of a name."""
    lengths: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
            name = f"{path.relative_to(ROOT).as_posix()}:{node.name}"
            lengths[name] = max(lengths.get(name, 0), node.end_lineno - node.lineno + 1)
    return lengths


def test_package_modules_and_functions_stay_small():
    too_long, lengths = [], {}
    for path in sorted((ROOT / "src" / "perfport").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines (at most {MAX_MODULE_LINES})")
        lengths.update(_function_lengths(path))
    for name, n in lengths.items():
        allowed = KNOWN_LONG.get(name, MAX_FUNCTION_LINES)
        if n > allowed:
            too_long.append(f"{name}: {n} lines (at most {allowed}); split it along its seams")
    stale = [n for n, cap in KNOWN_LONG.items() if lengths.get(n, 0) <= MAX_FUNCTION_LINES]
    assert not too_long, "\n".join(too_long)
    assert not stale, f"split already, remove from KNOWN_LONG: {', '.join(stale)}"


def test_test_files_have_unique_names():
    # The tests folders are not packages: pytest imports each file by its name alone, so a
    # second test_sweep.py in another folder fails to collect (and only in a full run).
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    assert not {n for n in names if names.count(n) > 1}
