"""The shared pieces every capability uses: geometric means, identifiers, the optional guard."""

import math

import numpy as np
import pytest

from perfport._core import MissingExtra
from perfport._core.identifiers import is_code_keyword, is_identifier, is_kernel_word
from perfport._core.optional import require
from perfport._core.stats import floored_geomean, geomean


def test_geomean_leaves_out_what_has_no_logarithm():
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([2.0, 8.0, 0.0, -1.0, np.nan, np.inf]) == pytest.approx(4.0)
    assert math.isnan(geomean([0.0, np.nan]))


def test_floored_geomean_charges_a_failure_the_floor():
    assert floored_geomean(np.array([1.0, 0.0]), 1e-2) == pytest.approx(0.1)
    columns = floored_geomean(np.array([[1.0, 4.0], [4.0, 0.0]]), 1.0, axis=0)
    np.testing.assert_allclose(columns, [2.0, 2.0])


def test_identifiers_and_reserved_words():
    assert is_identifier("tile_x2") and not is_identifier("2x") and not is_identifier(3)
    assert is_kernel_word("local") and is_kernel_word("__x") and not is_kernel_word("TILE")
    assert is_code_keyword("class") and is_code_keyword("lambda") and not is_code_keyword("tile")


def test_a_missing_extra_names_the_extra():
    with pytest.raises(MissingExtra, match=r"perfport\[models\]"):
        require("perfport_no_such_module", "models", "A test")
