"""--json output is strict JSON: non-finite floats become null."""

from __future__ import annotations

import json
import math

import pytest

from perfport.cli.render import print_json


def test_non_finite_floats_print_as_null(capsys: pytest.CaptureFixture[str]) -> None:
    nan, inf = float("nan"), float("inf")
    print_json({"performance_ci95": (nan, nan), "worst": -inf, "ok": 0.5, "n": [1, {"x": inf}]})
    out = capsys.readouterr().out

    def refuse(name: str) -> None:
        raise ValueError(name)

    data = json.loads(out, parse_constant=refuse)  # NaN / Infinity would raise here
    assert data == {
        "performance_ci95": [None, None],
        "worst": None,
        "ok": 0.5,
        "n": [1, {"x": None}],
    }
    assert not math.isnan(data["ok"])
