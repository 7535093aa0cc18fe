"""Fixtures of the model tests: loopy's statistics of the built-in matmul kernels, gathered
once per session (the test extra installs loopy; without it these tests skip, saying so)."""

from __future__ import annotations

import pytest

pytest.importorskip("loopy", reason="perfport.model needs loopy: pip install 'perfport[model]'")


@pytest.fixture(scope="session")
def matmul_stats():
    from perfport.model import APPLICATIONS, gather

    return {name: gather(app.make()) for name, app in APPLICATIONS.items()}
