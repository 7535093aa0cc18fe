"""Shared fixtures. Tests run on PoCL's CPU device (pip install 'perfport[pocl]')."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfport._core import DeviceInfo
from perfport.devices import get_device

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def cpu() -> DeviceInfo:
    """The default device: PoCL's CPU device in CI."""
    return get_device()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"
