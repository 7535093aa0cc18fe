"""The best line of 'perfport tune' compares the best with the default truthfully: by the
objective when one is set, and never 'faster' of a best that is slower."""

from __future__ import annotations

import pytest

from perfport._core import Config, DeviceInfo, Measurement, Outcome, Problem
from perfport._core.metrics import Objective, ResultMetrics
from perfport.cli.render import best_line
from perfport.space import PruningReport
from perfport.store import CampaignStatus
from perfport.tune.result import TuneResult

DEFAULT, WIDE = Config.of(wg=64), Config.of(wg=256)
DEFAULT_RUN = Measurement(DEFAULT, Outcome.OK, times_ms=(0.0187,))
SCORING = ResultMetrics.of({"name": "k", "metrics": {"score": "wg / time_ms"}}, {})


def _result(cpu: DeviceInfo, objective: Objective, default: int = 0) -> TuneResult:
    # WIDE is slower (0.02 ms against 0.0187) but scores higher (12800 against 3422)
    runs = (
        DEFAULT_RUN,
        Measurement(WIDE, Outcome.OK, times_ms=(0.02,)),
    )
    return TuneResult(
        campaign="c", status=CampaignStatus.COMPLETE, device=cpu, kernel="k",
        problem=Problem.of(), strategy="listed", space=PruningReport(2, 2, ()),
        measurements=runs, default=runs[default], verification="-", db="x.db",
        objective=objective, scoring=SCORING,
    )  # fmt: skip


def test_a_best_by_a_metric_that_is_slower_is_not_called_faster(cpu: DeviceInfo) -> None:
    """It printed 'best: ... 0.94x faster than the default' of a best chosen by score."""
    result = _result(cpu, Objective.parse("score"))
    assert result.best is not None and result.best.config == WIDE
    line = best_line(result, result.best)
    assert line.startswith("best by score:max: wg=256 at 0.02 ms (score 1.28e+04)")
    assert "3.74x the default's score and 1.07x slower than the default wg=64" in line
    assert "faster" not in line
    assert result.to_json()["objective_over_default"] == pytest.approx(12800 / (64 / 0.0187))
    assert result.to_json()["speedup_over_default"] == pytest.approx(0.0187 / 0.02)


def test_by_time_the_line_is_as_before(cpu: DeviceInfo) -> None:
    result = _result(cpu, Objective())
    assert result.best is not None and result.best.config == DEFAULT
    assert best_line(result, result.best) == "best: wg=64 at 0.0187 ms"
    assert result.to_json()["objective_over_default"] == 1.0
    slower_default = _result(cpu, Objective(), default=1)
    assert best_line(slower_default, DEFAULT_RUN) == (
        "best: wg=64 at 0.0187 ms, 1.07x faster than the default wg=256"
    )
