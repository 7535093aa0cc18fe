"""Progress display for long campaigns (a rich bar with an ETA on stderr)."""

from __future__ import annotations

from typing import Any

from perfport._core import Measurement


class Progress:
    """Silent progress; the base for displays. Call order: start, update*, stop."""

    def start(self, total: int, done: int, description: str) -> None:
        pass

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        pass

    def stop(self) -> None:
        pass


class RichProgress(Progress):
    """A rich progress bar: configurations done of the budget, elapsed time, ETA, best time."""

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
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[best]}"),
            console=Console(stderr=True),
        )
        self._task: Any = None

    def start(self, total: int, done: int, description: str) -> None:
        self._bar.start()
        self._task = self._bar.add_task(description, total=total, completed=done, best="")

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        best = f"best {best_ms:.4g} ms" if best_ms is not None else ""
        self._bar.update(self._task, completed=done, best=best)

    def stop(self) -> None:
        self._bar.stop()
