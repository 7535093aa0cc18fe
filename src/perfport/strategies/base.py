"""The contract of search strategies."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from perfport._core.errors import PerfportError
from perfport.space import Space


def checked_seed(seed: object) -> int:
    """``seed`` if it is a whole number >= 0; numpy's own refusals name neither."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise PerfportError(f"a strategy's seed must be a whole number >= 0, not {seed!r}")
    return int(seed)


class Strategy(ABC):
    """Search as ask/tell over the numbered legal configurations of a Space.

    Contract:
    - ``ask()`` returns the index of the next configuration to evaluate, or None when the
      strategy has nothing more to propose.
    - Each asked index is told back with ``tell`` before the next ``ask``.
    - ``tell`` also takes indices the strategy did not ask for (the default configuration,
      results of an earlier session); a strategy must not ask for a told index again.
    - ``value`` is the objective (time in ms, lower is better) or None when the
      configuration failed (compile error, refused, wrong result, ...).
    - No I/O, no devices, no store; deterministic given the seed and the answers to its
      asks, so a resumed campaign, which asks again and answers from its stored results,
      reaches the same state (a strategy may draw random numbers or change state in ``ask``).
    Not thread-safe.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    takes_prior: ClassVar[bool] = False  # whether the constructor takes ``scores=``
    takes_ranker: ClassVar[bool] = False  # whether it takes ``ranker=`` (and cannot run without)
    requires: ClassVar[str] = ""  # what a run must be given beyond the kernel, if anything

    @classmethod
    def check_available(cls) -> None:
        """Raise the one-line error naming the extra to install if the strategy needs an
        optional package that is missing (called before a campaign starts)."""
        return None  # most need none

    def __init__(self, space: Space, seed: int = 0) -> None:
        self.space = space
        self.seed = checked_seed(seed)
        self.told: dict[int, float | None] = {}

    @abstractmethod
    def ask(self) -> int | None: ...

    def tell(self, index: int, value: float | None) -> None:
        # A bad index or value would otherwise surface later, far from its cause: as an
        # IndexError at the next ask, or a NaN in a surrogate's logarithms.
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise PerfportError(f"tell got index {index!r}: pass the int that ask() returned")
        if not 0 <= index < len(self.space):
            raise PerfportError(
                f"tell got index {index}, outside the space's 0-{len(self.space) - 1}: "
                "pass the number that ask() returned"
            )
        if value is not None and not (
            isinstance(value, int | float | np.number) and math.isfinite(value) and value > 0
        ):
            raise PerfportError(
                f"tell got value {value!r}: pass a positive finite time (lower is better), "
                "or None for a failed configuration"
            )
        self.told[int(index)] = value

    def plan(self) -> Sequence[int] | None:
        """Every index this strategy will ask for, in order, when that is fixed up front
        (so builds can be compiled ahead, ``perfport tune --build-jobs``); None when it
        chooses as it goes."""
        return None

    @property
    def best(self) -> tuple[int, float] | None:
        """The best (index, value) told so far."""
        ok = [(v, i) for i, v in self.told.items() if v is not None]
        return (min(ok)[1], min(ok)[0]) if ok else None


class FixedOrder(Strategy):
    """Walks an order fixed at construction, skipping what has been told; its plan is that
    order, so the builds can be compiled ahead."""

    def __init__(self, space: Space, seed: int, order: Sequence[int] | np.ndarray) -> None:
        super().__init__(space, seed)
        self._order = np.asarray(order, dtype=np.int64)
        self._next = 0

    def ask(self) -> int | None:
        while self._next < len(self._order) and int(self._order[self._next]) in self.told:
            self._next += 1
        return int(self._order[self._next]) if self._next < len(self._order) else None

    def plan(self) -> Sequence[int]:
        return [int(i) for i in self._order]


class StrategyError(PerfportError):
    """A strategy broke its contract: it cannot be built, or its ask() returned what is not an
    untold configuration number of its space."""


def checked_ask(strategy: Strategy) -> int | None:
    """``strategy.ask()``, checked: the number of a configuration not told yet, or None when it
    has nothing more to propose (or asks again once every configuration is told). Anything
    else is a one-line StrategyError naming the strategy and what ask() returned."""
    index = strategy.ask()
    if index is None:
        return None
    name, size = strategy.name, len(strategy.space)
    if isinstance(index, bool) or not isinstance(index, int | np.integer):
        raise StrategyError(
            f"strategy {name}: ask() returned {index!r} ({type(index).__name__}); return the "
            f"int number of a configuration (0-{size - 1}), or None when it has nothing more "
            "to propose"
        )
    if not 0 <= index < size:
        raise StrategyError(
            f"strategy {name} asked for configuration {index}, outside the space's "
            f"0-{size - 1}: ask() must return a number below len(self.space), or None when it "
            "has nothing more to propose"
        )
    index = int(index)
    if index in strategy.told:
        if len(strategy.told) >= size:
            return None  # every configuration is told: the search has ended either way
        raise StrategyError(
            f"strategy {name}: ask() returned configuration {index}, which it was already told "
            f"({len(strategy.told)} of {size} told); ask for one not in self.told, or return "
            "None to end the search"
        )
    return index


def _numbered(item: object, size: int) -> bool:
    return (
        isinstance(item, int | np.integer) and not isinstance(item, bool) and 0 <= int(item) < size
    )


def checked_plan(strategy: Strategy) -> Sequence[int] | None:
    """``strategy.plan()``, checked as ``checked_ask`` checks an answer: configuration numbers
    of its space (a StrategyError naming the first that is not), or None."""
    plan = strategy.plan()
    if plan is None:
        return None
    size = len(strategy.space)
    try:
        order = np.asarray(plan)
    except ValueError:  # items of unequal lengths: numpy makes no array of them
        order = np.empty(0, dtype=object)
    if order.ndim == 1 and order.dtype.kind in "iu":
        bad = np.flatnonzero((order < 0) | (order >= size))
        at = int(bad[0]) if len(bad) else None
    else:  # not numbers throughout: the first item that is not one ([[0], [1]] holds [0])
        at = next((i for i, x in enumerate(plan) if not _numbered(x, size)), None)
    if at is not None:
        item = plan[at]
        item = item.tolist() if isinstance(item, np.ndarray | np.generic) else item
        raise StrategyError(
            f"strategy {strategy.name}: plan() holds {item!r}, not a "
            f"configuration number of its space (0-{size - 1}); return the int numbers ask() "
            "will return, in order, or None"
        )
    return plan
