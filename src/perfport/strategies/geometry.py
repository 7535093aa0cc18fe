"""Coordinates of a search space for strategies that move or model: each legal configuration
as the positions of its values (0..n-1 per parameter, in the order the values are listed),
scaled to [0, 1]. Listed values are usually sorted, often powers of two, so positions are the
log scale on which kernel times tend to be smooth."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from perfport.space import Space


class Geometry:
    """Positions, neighbours and nearest legal points of a Space's legal configurations."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self.pos = space.positions()  # (n, d) value positions
        sizes = np.array([len(p.values) for p in space.params], dtype=np.float64)
        self.sizes = sizes.astype(np.int64)
        # Parameters with one value carry no information; they scale to 0.
        self.unit = self.pos / np.maximum(sizes - 1.0, 1.0)

    def __len__(self) -> int:
        return len(self.pos)

    @cached_property
    def _lookup(self) -> dict[tuple[int, ...], int]:
        return {tuple(row): i for i, row in enumerate(self.pos.tolist())}

    def index(self, position: np.ndarray | tuple[int, ...]) -> int | None:
        """The legal configuration at these value positions, if any."""
        return self._lookup.get(tuple(int(x) for x in position))

    def neighbours(self, i: int) -> list[int]:
        """Legal configurations one step away: one parameter moved to an adjacent value."""
        here = self.pos[i]
        out = []
        for dim in range(self.pos.shape[1]):
            for step in (-1, 1):
                moved = here.copy()
                moved[dim] += step
                if 0 <= moved[dim] < self.sizes[dim] and (j := self.index(moved)) is not None:
                    out.append(j)
        return out

    def exchanges(self, i: int) -> list[int]:
        """Legal configurations that differ from ``i`` in exactly one parameter, set to any of
        its other values."""
        here = self.pos[i]
        out = []
        for dim, size in enumerate(self.sizes):
            for value in range(int(size)):
                if value != here[dim]:
                    moved = here.copy()
                    moved[dim] = value
                    if (j := self.index(moved)) is not None:
                        out.append(j)
        return out

    def nearest(self, point: np.ndarray, exclude: set[int] | None = None) -> int | None:
        """The legal configuration nearest to a point of the unit cube (not in ``exclude``)."""
        distance = np.sum((self.unit - point) ** 2, axis=1)
        if exclude:
            distance[list(exclude)] = np.inf
        i = int(np.argmin(distance))
        return None if not np.isfinite(distance[i]) else i
