"""Strategies that need no model: every configuration in order, or in random order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfport.space import Space
from perfport.strategies.base import Strategy


class BruteForce(Strategy):
    """Every legal configuration, in space order."""

    name = "brute_force"
    summary = "every legal configuration in order"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self._next = 0

    def ask(self) -> int | None:
        while self._next < len(self.space) and self._next in self.told:
            self._next += 1
        return self._next if self._next < len(self.space) else None

    def plan(self) -> Sequence[int]:
        return range(len(self.space))


class RandomSearch(Strategy):
    """Legal configurations in a seeded random order, each at most once."""

    name = "random"
    summary = "legal configurations in seeded random order, without repeats"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self._order = np.random.default_rng(seed).permutation(len(space))
        self._next = 0

    def ask(self) -> int | None:
        while self._next < len(self._order) and int(self._order[self._next]) in self.told:
            self._next += 1
        return int(self._order[self._next]) if self._next < len(self._order) else None

    def plan(self) -> Sequence[int]:
        return [int(i) for i in self._order]


class Listed(Strategy):
    """Exactly the given configurations, in the given order: a shipped set measured on a new
    device (``perfport tune --configs``). Built with the list, so not chosen by name."""

    name = "listed"
    summary = "exactly the given configurations, in order"

    def __init__(self, space: Space, seed: int = 0, order: tuple[int, ...] = ()) -> None:
        super().__init__(space, seed)
        self._order = order
        self._next = 0

    def ask(self) -> int | None:
        while self._next < len(self._order) and self._order[self._next] in self.told:
            self._next += 1
        return self._order[self._next] if self._next < len(self._order) else None

    def plan(self) -> Sequence[int]:
        return self._order
