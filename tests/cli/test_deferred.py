"""cli.deferred: a name bound now and imported on first use."""

from __future__ import annotations

import sys

from perfport.cli.deferred import Deferred


def test_deferred_imports_on_first_use_and_forwards():
    sys.modules.pop("colorsys", None)  # a small standard module nothing here imports
    hls = Deferred("colorsys", "rgb_to_hls")
    module = Deferred("colorsys")
    assert "colorsys" not in sys.modules and "colorsys" in repr(hls)
    assert hls(1.0, 0.0, 0.0) == (0.0, 0.5, 1.0)
    assert module.ONE_THIRD == 1.0 / 3.0
    assert "colorsys" in sys.modules
