"""A Ctrl-C while the command line's modules load (before perfport.cli.main runs) ends as
any other: "perfport: interrupted", exit 130, no traceback (user audit item 6)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

# Ctrl-C arriving while perfport.cli is imported, made deterministic: that import raises it.
_INTERRUPTED_IMPORT = """
import builtins, runpy
real = builtins.__import__
def arriving(name, *args, **kwargs):
    if name == "perfport.cli":
        raise KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = arriving
runpy.run_module("perfport", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_modules_load_is_one_line_and_exit_130():
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT, "results"], capture_output=True, text=True
    )
    assert done.returncode == 130
    assert done.stderr == "perfport: interrupted\n"


def test_the_console_script_enters_where_that_is_handled():
    # The `perfport` script imports its entry point's module first: perfport.cli would load
    # every command module before any handler could run.
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["perfport"] == "perfport.__main__:main"
