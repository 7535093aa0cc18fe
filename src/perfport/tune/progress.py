"""Progress display for long campaigns: a rich bar with an ETA on stderr for one device, a
Board of rows (live on a terminal, plain lines elsewhere) for several at once."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

from perfport._core import Measurement


class Progress:
    """Silent progress; the base for displays. Call order: start, update*, recount, stop."""

    def start(self, total: int, done: int, description: str) -> None:
        pass

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        pass

    def recount(self, done: int, best_ms: float | None) -> None:
        """The campaign's count and best time re-read at the end: other writers (devices
        sharing the campaign) may have stored results since this session's last ``update``."""

    def stop(self) -> None:
        pass


class RichProgress(Progress):
    """A rich progress bar: configurations done of the campaign's total (the space or the list,
    within the budget), elapsed time, ETA, best time."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as Bar,
        )

        self._bar = Bar(
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[best]}", markup=False),
            console=Console(stderr=True, markup=False),
        )
        self._task: Any = None

    def start(self, total: int, done: int, description: str) -> None:
        self._bar.start()
        self._task = self._bar.add_task(description, total=total, completed=done, best="")

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        self.recount(done, best_ms)

    def recount(self, done: int, best_ms: float | None) -> None:
        best = f"best {best_ms:.4g} ms" if best_ms is not None else ""
        self._bar.update(self._task, completed=done, best=best)

    def stop(self) -> None:
        self._bar.stop()


@dataclass
class _Row:
    """One device's line of a Board."""

    label: str
    total: int = 0
    done: int = 0
    start_done: int = 0  # stored before this session: not part of the rate
    best_ms: float | None = None
    outcomes: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    printed: float = 0.0
    finished: bool = False

    def text(self) -> str:
        """``label: done/total best rate ETA outcomes``, the plain line and the live row's cells."""
        return " ".join(self.cells())

    def cells(self) -> list[str]:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = sum(self.outcomes.values()) / elapsed  # this device's trials
        together = (self.done - self.start_done) / elapsed  # its campaign's, every device's
        left = max(self.total - self.done, 0)
        eta = (
            "done"
            if self.finished or not left
            else f"ETA {left / together:.0f} s"
            if together
            else "ETA ?"
        )
        best = f"best {self.best_ms:.4g} ms" if self.best_ms is not None else "best -"
        counts = ",".join(f"{k}={v}" for k, v in sorted(self.outcomes.items())) or "-"
        return [f"{self.label}:", f"{self.done}/{self.total}", best, f"{rate:.2f}/s", eta, counts]


class Board:
    """Progress of several sessions at once (one row per device), fed from their threads.

    On a terminal (``live``) a rich table redrawn in place; otherwise plain lines on
    ``stream``, one per row at most every ``interval_s`` seconds and one when it stops, so a
    log or a test reads every device's best, rate, ETA and outcome counts. Use as a context
    manager around the sessions; ``lane(label)`` is the Progress a session reports to."""

    def __init__(
        self, stream: TextIO | None = None, live: bool | None = None, interval_s: float = 1.0
    ) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.interval_s = interval_s
        self.rows: dict[str, _Row] = {}
        self._lock = threading.Lock()  # lanes update from their sessions' threads
        self._live: Any = None

    def lane(self, label: str) -> Progress:
        with self._lock:
            row = self.rows.setdefault(label, _Row(label))
        return _Lane(self, row)

    def __enter__(self) -> Board:
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                get_renderable=self._table,
                console=Console(file=self.stream, markup=False),
                refresh_per_second=4,
            )
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def _table(self) -> Any:
        from rich.table import Table

        table = Table("device", "done", "best", "rate", "ETA", "outcomes", box=None)
        with self._lock:
            for row in self.rows.values():
                table.add_row(*row.cells())
        return table

    def _changed(self, row: _Row, final: bool = False) -> None:
        """Print ``row`` in plain mode when its interval has passed (always when final)."""
        if self.live:
            return
        now = time.monotonic()
        with self._lock:
            if not final and now - row.printed < self.interval_s:
                return
            row.printed = now
            print(row.text(), file=self.stream, flush=True)


class _Lane(Progress):
    """One session's Progress, writing into its row of a Board."""

    def __init__(self, board: Board, row: _Row) -> None:
        self.board, self.row = board, row

    def start(self, total: int, done: int, description: str) -> None:
        self.row.label = self.row.label or description  # an unnamed lane takes the run's
        self.row.total, self.row.done, self.row.start_done = total, done, done
        self.row.started, self.row.finished = time.monotonic(), False

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        self.row.done, self.row.best_ms = done, best_ms
        self.row.outcomes[last.outcome.value] += 1
        self.board._changed(self.row)

    def recount(self, done: int, best_ms: float | None) -> None:
        self.row.done, self.row.best_ms = done, best_ms

    def stop(self) -> None:
        self.row.finished = True
        self.board._changed(self.row, final=True)
