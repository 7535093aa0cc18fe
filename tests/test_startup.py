"""Start-up: importing perfport, or asking the command line for help, imports nothing heavy.

`perfport space` on a small file once took as long as Kernel Tuner's whole process, because
numpy, rich and the tune and measure layers were imported before anything ran (issue 22).
Times vary from machine to machine, so these tests check what is imported, not how long it takes.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# Third-party packages that neither `import perfport` nor `perfport --help` may import.
HEAVY = ("numpy", "rich", "pyopencl", "yaml", "sklearn", "cupy", "fastapi", "uvicorn",
         "llvmlite", "matplotlib", "optuna", "dask", "loopy")  # fmt: skip


def imported(*args: str) -> set[str]:
    """The modules that ``python -X importtime ARGS`` imports (its report is on stderr)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    } - {"package"}  # the report's header line


def perfport_layers(modules: set[str]) -> set[str]:
    return {m.split(".")[1] for m in modules if m.startswith("perfport.")}


def test_import_perfport_imports_no_optional_dependency_and_no_layer():
    modules = imported("-c", "import perfport")
    assert "perfport" in modules  # the report was read
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)
    assert perfport_layers(modules) == {"_core"}


@pytest.mark.parametrize("argv", [["--help"], ["wg", "--help"], ["select", "portable", "--help"]])
def test_help_imports_no_heavy_module_and_no_layer_it_does_not_run(argv):
    modules = imported("-m", "perfport", *argv)
    assert "perfport.cli" in modules
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)
    assert perfport_layers(modules) <= {"_core", "cli"}


def test_the_facade_is_lazy_but_complete():
    """Every name of perfport's API resolves on first use; the functions perfport.tune and
    perfport.devices keep their names once the subpackages of the same names are imported."""
    import importlib

    import perfport

    assert set(perfport.__all__) <= set(dir(perfport))
    for name in perfport.__all__:
        assert getattr(perfport, name) is not None
    importlib.import_module("perfport.tune.replay")
    importlib.import_module("perfport.devices")
    assert callable(perfport.tune) and perfport.tune.__module__ == "perfport.tune.tune"
    assert callable(perfport.devices) and perfport.devices.__module__ == "perfport"
    from perfport import best_results, list_devices  # importable, as before, though not in __all__

    assert callable(best_results) and callable(list_devices)
    from perfport._core import SplitDim

    assert perfport.SplitDim is SplitDim and "SplitArray" in perfport.__all__  # docs/split.md
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        perfport.not_a_name  # noqa: B018
