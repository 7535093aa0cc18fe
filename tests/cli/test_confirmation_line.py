"""The line that reports the re-timed winner says so when the fastest stored median belongs to
another configuration (re-timed and slower side by side, or not re-timed), and only then."""

from __future__ import annotations

from perfport._core import Config, Measurement, Outcome
from perfport.cli.tune import confirmation_line
from perfport.tune.confirm import Candidate, Confirmation

A, B, C = Config.of(wg=32), Config.of(wg=64), Config.of(wg=128)
RETIMED = Confirmation(
    (Candidate(B, 3.8, (3.7, 3.9), 20), Candidate(A, 4.2, (4.1, 4.3), 20)), rounds=4, seconds=1.0
)


def test_a_winner_other_than_the_stored_best_is_explained():
    line = confirmation_line(RETIMED, Measurement(A, Outcome.OK, times_ms=(3.5,)))
    assert "beyond doubt" in line and "stored medians" in line and "{'wg': 32}" in line


def test_no_remark_when_the_stored_best_is_the_winner():
    assert "stored median" not in confirmation_line(RETIMED, Measurement(B, Outcome.OK))
    assert "stored median" not in confirmation_line(RETIMED)


def test_a_stored_best_that_was_not_re_timed_is_named():
    """The best line named one configuration and the confirmed winner another, unexplained."""
    line = confirmation_line(RETIMED, Measurement(C, Outcome.OK))
    assert "of those re-timed; {'wg': 128}" in line and "was not re-timed" in line
