"""The progress Board: a row per device with best, rate, ETA and outcome counts; plain lines
when not on a terminal, a live table on one."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console

from perfport import RunSettings, Timing, tune
from perfport._core import Config, Measurement, Outcome
from perfport.store import Store
from perfport.tune.progress import Board, Progress


def _feed(board: Board) -> None:
    a, b = board.lane("gpu-a"), board.lane("gpu-b")
    a.start(10, 0, "k on a")
    b.start(10, 0, "k on b")
    a.update(1, Measurement(Config.of({"x": 1}), Outcome.OK, times_ms=(2.5,)), 2.5)
    b.update(2, Measurement(Config.of({"x": 2}), Outcome.CRASHED, "died"), 2.5)
    a.stop()
    b.stop()


def test_plain_lines_name_every_device_with_best_rate_eta_and_counts() -> None:
    out = io.StringIO()
    with Board(out, live=False, interval_s=0) as board:
        _feed(board)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("gpu-a: 1/10 best 2.5 ms") and "ok=1" in lines[0]
    assert "ETA" in lines[0] and "/s" in lines[0]
    assert lines[1].startswith("gpu-b: 2/10 best 2.5 ms") and "crashed=1" in lines[1]
    assert lines[-1].startswith("gpu-b: 2/10") and lines[-1].split()[-2] == "done"


def test_plain_lines_are_throttled_per_device() -> None:
    out = io.StringIO()
    with Board(out, live=False, interval_s=3600) as board:
        lane = board.lane("cpu")
        lane.start(5, 0, "k")
        for n in range(1, 5):
            lane.update(n, Measurement(Config.of({"x": n}), Outcome.OK, times_ms=(1.0,)), 1.0)
        lane.stop()
    assert len(out.getvalue().splitlines()) == 2  # the first update, and the last line


def test_live_table_has_a_row_per_device() -> None:
    board = Board(io.StringIO(), live=False)
    _feed(board)
    shown = io.StringIO()
    Console(file=shown, width=200).print(board._table())
    text = shown.getvalue()
    assert "gpu-a" in text and "gpu-b" in text and "crashed=1" in text and "best 2.5 ms" in text


@pytest.mark.slow  # seconds of subprocesses; ./dev test --slow runs it
def test_one_device_tune_prints_plain_progress_when_not_a_terminal(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "tune", "vector_add", "--problem", "n=4096",
         "--budget", "2", "--repeats", "2", "--db", str(tmp_path / "p.db"), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2/2 best" in done.stderr and "ok=" in done.stderr and "done" in done.stderr


class _Totals(Progress):
    """Records what each session's progress was told it would do."""

    def __init__(self) -> None:
        self.started: list[tuple[int, int]] = []

    def start(self, total: int, done: int, description: str) -> None:
        self.started.append((total, done))


def test_a_list_of_configurations_counts_the_list_not_the_space(db) -> None:
    """tune --configs (2 of vector_add's 11) showed '1/11 ... ETA', then '2/11 ... done'."""
    settings = RunSettings(timing=Timing.fixed(2), verify=False)
    listed = [{"wg": 16}, {"wg": 32}]
    seen = _Totals()
    for _ in range(2):  # and resumed: both already stored
        tune("vector_add", problem={"n": 4096}, configs=listed, db=db, settings=settings,
             progress=seen)  # fmt: skip
    assert seen.started == [(2, 0), (2, 2)]
    budgeted = _Totals()
    tune("vector_add", problem={"n": 4096}, budget=3, db=db, settings=settings,
         strategy="brute_force", progress=budgeted)  # fmt: skip
    assert budgeted.started == [(3, 0)]


class _OtherWriter(Progress):
    """Records what the progress shows, and after this session's second result stores a third
    configuration in the campaign, as another device sharing it would."""

    def __init__(self, db) -> None:
        self.db, self.shown, self.best = db, [], None

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        self.shown.append(done)
        if done == 2:
            with Store(self.db) as store:
                campaign = store.campaign("shared")
                held = {m.config for m in store.measurements(campaign)}
                other = next(c for c in (Config.of(wg=2**k) for k in range(11)) if c not in held)
                store.record(campaign, Measurement(other, Outcome.OK, times_ms=(1e-6,)))

    def recount(self, done: int, best_ms: float | None) -> None:
        self.shown.append(done)
        self.best = best_ms


def test_the_last_count_includes_what_other_writers_stored_meanwhile(db) -> None:
    """With two devices on one campaign, the one that finished first showed '5/6 ... done'
    beside the other's '6/6': its count was its last own result's, never re-read."""
    seen = _OtherWriter(db)
    tune("vector_add", problem={"n": 4096}, budget=3, db=db, campaign="shared",
         settings=RunSettings(timing=Timing.fixed(2), verify=False), strategy="brute_force",
         progress=seen)  # fmt: skip
    assert seen.shown == [1, 2, 3] and seen.best == 1e-6


def test_a_recounted_row_shows_the_campaigns_count_in_its_last_line() -> None:
    out = io.StringIO()
    with Board(out, live=False, interval_s=0) as board:
        lane = board.lane("gpu-a")
        lane.start(6, 0, "k")
        lane.update(5, Measurement(Config.of({"x": 1}), Outcome.OK, times_ms=(1.0,)), 1.0)
        lane.recount(6, 0.5)
        lane.stop()
    assert out.getvalue().splitlines()[-1].startswith("gpu-a: 6/6 best 0.5 ms")
