"""Strategies that need no model: every configuration in order, or in random order."""

from __future__ import annotations

import numpy as np

from perfport.space import Space
from perfport.strategies.base import FixedOrder, checked_seed


class BruteForce(FixedOrder):
    """Every legal configuration, in space order."""

    name = "brute_force"
    summary = "every legal configuration in order"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed, range(len(space)))


class RandomSearch(FixedOrder):
    """Legal configurations in a seeded random order, each at most once."""

    name = "random"
    summary = "legal configurations in seeded random order, without repeats"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(
            space, seed, np.random.default_rng(checked_seed(seed)).permutation(len(space))
        )


class Listed(FixedOrder):
    """Exactly the given configurations, in the given order: a shipped set measured on a new
    device (``perfport tune --configs``). Built with the list, so not chosen by name."""

    name = "listed"
    summary = "exactly the given configurations, in order"

    def __init__(self, space: Space, seed: int = 0, order: tuple[int, ...] = ()) -> None:
        super().__init__(space, seed, order)
