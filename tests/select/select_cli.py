"""``perfport`` commands run in the test's own process (seconds less each than a new
Python process that imports perfport), answering as a finished process would."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest

# Warnings a process does not show on stderr by default.
HIDDEN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def perfport(argv: list[str], capsys: pytest.CaptureFixture[str]) -> SimpleNamespace:
    """``perfport ARGV``: its exit status (``returncode``), ``stdout`` and ``stderr``, with
    the warnings it would print there."""
    from perfport.cli import main

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(argv)
    done = capsys.readouterr()
    shown = [w for w in caught if not issubclass(w.category, HIDDEN)]
    err = done.err + "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in shown
    )
    return SimpleNamespace(returncode=code, stdout=done.out, stderr=err)
