"""Shared by the model tests: loopy's statistics of the built-in matmul kernels, gathered
once per session (the test extra installs loopy; without it these tests skip, saying so)."""

from __future__ import annotations

from functools import cache

import pytest

LOOPY = "perfport.model needs loopy: pip install 'perfport[model]'"


@cache
def matmul_stats() -> dict:
    pytest.importorskip("loopy", reason=LOOPY)
    from perfport.model import APPLICATIONS, gather

    return {
        name: gather(app.make()) for name, app in APPLICATIONS.items() if name.startswith("matmul")
    }
