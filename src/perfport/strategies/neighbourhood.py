"""Strategies that walk between neighbouring configurations: local search and annealing.

Neighbours differ in one parameter by one step in its list of values (see Geometry). A failed
configuration (value None) counts as worse than any that ran.
"""

from __future__ import annotations

import math

import numpy as np

from perfport.space import Space
from perfport.strategies.base import Strategy
from perfport.strategies.geometry import Geometry


def _better(a: float | None, b: float | None) -> bool:
    """Is a better than b (lower time; None is worst)?"""
    return a is not None and (b is None or a < b)


class _Walker(Strategy):
    """Shared state: a current configuration and untold neighbours to try from it."""

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self.geometry = Geometry(space)
        self.rng = np.random.default_rng(seed)
        self.current: int | None = None
        self.pending_start: int | None = None

    def _random_untold(self) -> int | None:
        n = len(self.space)
        if len(self.told) >= n:
            return None
        if len(self.told) < n // 2:  # rejection sampling is cheap while most are untold
            while True:
                i = int(self.rng.integers(n))
                if i not in self.told:
                    return i
        untold = np.setdiff1d(np.arange(n), np.fromiter(self.told, dtype=np.int64))
        return int(self.rng.choice(untold))

    def _untold_neighbours(self, i: int) -> list[int]:
        return [j for j in self.geometry.neighbours(i) if j not in self.told]

    def _start(self) -> int | None:
        """A new starting point: the best told configuration if it still has untold
        neighbours, else a random untold one (which is then asked)."""
        best = self.best
        if best is not None and self._untold_neighbours(best[0]):
            self.current = best[0]
            return None
        self.pending_start = self._random_untold()
        return self.pending_start


class LocalSearch(_Walker):
    """First-improvement hill climbing with random restarts."""

    name = "local_search"
    summary = "hill climbing over one-step neighbours, restarting at random local optima"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self.queue: list[int] = []

    def ask(self) -> int | None:
        for _ in range(len(self.space) + 1):
            if self.current is None:
                start = self._start()
                if start is not None:
                    return start
                if self.current is None:
                    return None
                self._refill()
            while self.queue:
                j = self.queue.pop()
                if j not in self.told:
                    return j
            self.current = None  # a local optimum: restart
        return None

    def _refill(self) -> None:
        assert self.current is not None
        self.queue = self._untold_neighbours(self.current)
        self.rng.shuffle(self.queue)

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        if index == self.pending_start:
            self.pending_start, self.current = None, index
            self._refill()
        elif self.current is not None and _better(value, self.told.get(self.current)):
            self.current = index
            self._refill()


class SimulatedAnnealing(_Walker):
    """Random one-step moves, accepting a worse configuration with probability
    exp(-(log t_new - log t_now) / T); T decays geometrically per evaluation."""

    name = "annealing"
    summary = "simulated annealing over one-step neighbours (log-time energy)"

    def __init__(self, space: Space, seed: int = 0, t0: float = 0.5, decay: float = 0.97) -> None:
        super().__init__(space, seed)
        self.temperature = t0
        self.decay = decay

    def ask(self) -> int | None:
        if self.current is None:
            start = self._start()
            if start is not None or self.current is None:
                return start
        options = self._untold_neighbours(self.current)
        if not options:  # stuck: jump
            self.current = None
            return self.ask()
        return int(options[self.rng.integers(len(options))])

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        self.temperature *= self.decay
        if index == self.pending_start:
            self.pending_start, self.current = None, index
            return
        if self.current is None or value is None:
            return
        now = self.told.get(self.current)
        if now is None or value < now:
            self.current = index
            return
        energy = math.log(value) - math.log(now)
        if self.rng.random() < math.exp(-energy / max(self.temperature, 1e-9)):
            self.current = index
