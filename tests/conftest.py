"""Shared fixtures. Tests run on PoCL's CPU device (pip install 'perfport[pocl]')."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfport._core import DeviceInfo
from perfport.devices import get_device

DATA = Path(__file__).parent / "data"
# Third-party tuning data beside the checkout (see ../shared/data/README.md); tests that need
# it skip where it is absent.
SHARED = Path(os.environ.get("PERFPORT_SHARED_DATA", Path(__file__).parents[2] / "shared" / "data"))
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"no third-party data at {SHARED}")


@pytest.fixture(scope="session")
def cpu() -> DeviceInfo:
    """The default device (PoCL's CPU device in CI), or PERFPORT_TEST_DEVICE."""
    return get_device(os.environ.get("PERFPORT_TEST_DEVICE"))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"
