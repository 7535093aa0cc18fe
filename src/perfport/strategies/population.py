"""Population strategies: a genetic algorithm and differential evolution.

Both breed candidates on value positions and repair any candidate that is illegal (or already
measured) to the nearest legal, unmeasured configuration, so constraints are always respected.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from perfport.space import Space
from perfport.strategies.base import Strategy
from perfport.strategies.geometry import Geometry

_WORST = np.inf


def _score(value: float | None) -> float:
    return _WORST if value is None else value


class _Population(Strategy):
    def __init__(self, space: Space, seed: int = 0, size: int = 20) -> None:
        super().__init__(space, seed)
        self.geometry = Geometry(space)
        self.rng = np.random.default_rng(seed)
        self.size = max(2, min(size, len(space)))
        self.queue: list[int] = []

    def _repair(self, point: np.ndarray) -> int | None:
        """The legal, untold configuration nearest a point of the unit cube."""
        return self.geometry.nearest(point, exclude=set(self.told) | set(self.queue))

    @abstractmethod
    def _breed(self) -> list[int]:
        """The next generation's untold configurations (empty when none can be made)."""

    def _fresh(self, count: int) -> list[int]:
        """``count`` random untold configurations (fewer only when fewer remain)."""
        n = len(self.space)
        # Drawing as many more as are told leaves ``count`` untold ones; with nothing told the
        # draw is the same as a plain one of ``count``.
        chosen = self.rng.choice(n, size=min(n, count + len(self.told)), replace=False)
        return [int(i) for i in chosen if int(i) not in self.told][:count]

    def ask(self) -> int | None:
        while True:
            while self.queue:
                i = self.queue.pop(0)
                if i not in self.told:
                    return i
            if len(self.told) >= len(self.space):
                return None
            self.queue = self._breed()
            if not self.queue:
                return None


class GeneticAlgorithm(_Population):
    """Tournament selection, uniform crossover and one-step mutations on value positions,
    keeping the best ``size`` configurations seen as the population (elitism)."""

    name = "genetic"
    summary = "genetic algorithm: tournaments, uniform crossover, one-step mutation, elitism"

    def __init__(
        self, space: Space, seed: int = 0, size: int = 20, mutation: float | None = None
    ) -> None:
        super().__init__(space, seed, size)
        dims = max(1, int(np.count_nonzero(self.geometry.sizes > 1)))
        self.mutation = mutation if mutation is not None else 1.0 / dims
        self.generation = 0

    def _population(self) -> list[int]:
        ranked = sorted(self.told, key=lambda i: (_score(self.told[i]), i))
        return ranked[: self.size]

    def _breed(self) -> list[int]:
        if self.generation == 0 or len(self.told) < 2:
            self.generation += 1
            return self._fresh(self.size)
        self.generation += 1
        parents = self._population()
        children: list[int] = []
        for _ in range(self.size):
            a, b = (self._tournament(parents) for _ in range(2))
            pa, pb = self.geometry.pos[a], self.geometry.pos[b]
            child = np.where(self.rng.random(len(pa)) < 0.5, pa, pb).astype(np.float64)
            for dim in np.flatnonzero(self.rng.random(len(child)) < self.mutation):
                child[dim] = np.clip(
                    child[dim] + self.rng.choice((-1, 1)), 0, self.geometry.sizes[dim] - 1
                )
            j = self.geometry.index(child.astype(np.int64))
            if j is None or j in self.told or j in children:
                j = self._repair(child / np.maximum(self.geometry.sizes - 1, 1))
            if j is not None and j not in children:
                children.append(j)
        return children

    def _tournament(self, parents: list[int]) -> int:
        a, b = self.rng.choice(len(parents), size=2)
        return parents[min(a, b)]  # parents are ranked: the lower rank wins


class DifferentialEvolution(_Population):
    """DE/rand/1/bin on the unit cube of value positions; each trial vector is repaired to the
    nearest legal, unmeasured configuration and replaces its target if it is faster."""

    name = "diff_evo"
    summary = "differential evolution (rand/1/bin) on value positions"

    def __init__(
        self, space: Space, seed: int = 0, size: int = 20, f: float = 0.6, cr: float = 0.7
    ) -> None:
        super().__init__(space, seed, size)
        self.f, self.cr = f, cr
        self.members: list[int] = []  # the population, as legal configurations
        self.targets: dict[int, int] = {}  # trial -> the member it challenges

    def _breed(self) -> list[int]:
        if not self.members:
            # Configurations told before the first ask (the default, say) join the population,
            # the best first, and random untold ones fill it; drawing again whenever it is short
            # would restart the search each generation, and end it when a draw is all told.
            kept = sorted(self.told, key=lambda i: (_score(self.told[i]), i))[: self.size]
            fresh = self._fresh(self.size - len(kept))
            self.members = kept + fresh
            if fresh:
                return fresh
        unit = self.geometry.unit
        trials: list[int] = []
        for slot, target in enumerate(self.members):
            others = [m for k, m in enumerate(self.members) if k != slot]
            a, b, c = (
                others[k] for k in self.rng.choice(len(others), size=3, replace=len(others) < 3)
            )
            mutant = unit[a] + self.f * (unit[b] - unit[c])
            cross = self.rng.random(len(mutant)) < self.cr
            cross[self.rng.integers(len(mutant))] = True
            point = np.clip(np.where(cross, mutant, unit[target]), 0.0, 1.0)
            j = self._repair(point)
            if j is not None and j not in trials:
                trials.append(j)
                self.targets[j] = slot
        return trials

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        slot = self.targets.pop(index, None)
        if slot is not None and _score(value) < _score(self.told.get(self.members[slot])):
            self.members[slot] = index
