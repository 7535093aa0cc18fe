"""The line that reports the re-timed winner says so when the fastest stored median belongs to
another configuration (re-timed and slower side by side, or not re-timed), and only then."""

from __future__ import annotations

from perfport._core import Config, Measurement, Outcome
from perfport._core.metrics import Objective
from perfport.cli.confirmation import confirmation_line
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


def test_an_objective_is_named_with_its_value_and_worse_not_slower():
    """Confirmed by a metric, the line said 'faster than the others' of the best by score."""
    goal = Objective.parse("score")
    by_score = Confirmation(
        (Candidate(C, 5.0, (4.9, 5.1), 20, 1 / 25.6, (1 / 26.1, 1 / 25.1)),
         Candidate(B, 3.8, (3.7, 3.9), 20, 1 / 16.8, (1 / 17.3, 1 / 16.4))),
        rounds=2, seconds=1.0, objective=goal,
    )  # fmt: skip
    line = confirmation_line(by_score, Measurement(B, Outcome.OK, times_ms=(3.5,)))
    assert line.startswith("confirmed best by score:max {'wg': 128}: score 25.6 at median 5 ms")
    assert "better by score than the others beyond doubt" in line and "faster" not in line
    assert "side by side {'wg': 64} was worse" in line


def test_a_confirmation_the_time_limit_ended_says_it_is_not_conclusive():
    """With a configuration never re-timed whose stored median beat the winner's, the line
    still said 'confirmed best ... beyond doubt' and named another winner than the best line."""
    cut = Confirmation(RETIMED.candidates, 1, 0.0, unconfirmed=(Candidate(C, 3.1, (3.0, 3.2), 5),))
    line = confirmation_line(cut, Measurement(C, Outcome.OK, times_ms=(3.1,)))
    assert line.startswith("not conclusive: best of those re-timed {'wg': 64}")
    assert "confirmed" not in line and "beyond doubt" not in line
    assert "not re-timed in the time given: {'wg': 128} 3.1 ms" in line


def test_a_best_that_failed_when_timed_again_is_explained():
    flaky = Confirmation(RETIMED.candidates, 2, 1.0, dropped=(C,))
    line = confirmation_line(flaky, Measurement(C, Outcome.OK, times_ms=(3.0,)))
    assert "{'wg': 128}, the best line above by its stored median, failed when timed" in line


def test_a_best_that_cannot_be_told_apart_is_explained_too():
    """Only a separated winner explained a best line naming another configuration."""
    tied = Confirmation(
        (Candidate(B, 3.8, (3.6, 4.3), 20), Candidate(A, 4.0, (3.7, 4.4), 20)), 4, 1.0
    )
    line = confirmation_line(tied, Measurement(A, Outcome.OK, times_ms=(3.5,)))
    assert "cannot be told apart from: {'wg': 32}" in line
    assert "side by side {'wg': 32} was slower at the median" in line
