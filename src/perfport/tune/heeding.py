"""A multi-device session's measurer and progress lane that stop it once the driver asks every
session to stop (``perfport.tune.multi``): a signal reaches only the main thread."""

from __future__ import annotations

import threading

from perfport._core import Config, Measurement
from perfport.tune.confirm import Measures
from perfport.tune.progress import Progress


class Heeding:
    """A session's measurer that starts no trial once the driver has asked every session to
    stop: a session that was waiting (for builds, for another writer's claim) stops there."""

    def __init__(self, measurer: Measures, stop: threading.Event) -> None:
        self.measurer, self.stop = measurer, stop

    def measure(self, config: Config) -> Measurement:
        if self.stop.is_set():
            raise KeyboardInterrupt  # the loop ends the session as interrupted
        return self.measurer.measure(config)


class Stoppable(Progress):
    """A lane that ends its session (as Ctrl-C would) after the trial in flight once the
    driver asks every session to stop: a signal reaches only the main thread."""

    def __init__(self, lane: Progress, stop: threading.Event) -> None:
        self.lane, self.stop_event = lane, stop

    def start(self, total: int, done: int, description: str) -> None:
        self.lane.start(total, done, description)

    def update(self, done: int, last: Measurement, best_ms: float | None) -> None:
        self.lane.update(done, last, best_ms)
        if self.stop_event.is_set():
            raise KeyboardInterrupt

    def recount(self, done: int, best_ms: float | None) -> None:
        self.lane.recount(done, best_ms)

    def stop(self) -> None:
        self.lane.stop()
