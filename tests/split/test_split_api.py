"""perfport.split names its Python API (the names docs/split.md presents), as the other
layers do; it had no __all__, so neither `from perfport.split import *` nor a reader could tell
what is public."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "split.md"


def test_the_split_api_is_named_and_each_name_resolves_where_the_docs_say():
    import perfport.split as split

    assert split.__all__ and set(split.__all__) <= set(dir(split))
    text = DOC.read_text()
    for name in split.__all__:
        value = getattr(split, name)
        module = importlib.import_module(value.__module__)
        assert getattr(module, name) is value
        assert name in text, f"{name} is not in docs/split.md"
    assert "split_run" in split.__all__ and "run_steps" in split.__all__


def test_importing_the_package_imports_none_of_its_modules():
    code = "import sys, perfport.split; print(sorted(m for m in sys.modules if 'numpy' in m or m.startswith('perfport.split.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
