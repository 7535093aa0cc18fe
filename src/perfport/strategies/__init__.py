"""Layer 3: search strategies as pure ask/tell objects (no I/O, devices or store)."""

from __future__ import annotations

from perfport._core import PerfportError
from perfport.strategies.base import Strategy
from perfport.strategies.basic import BruteForce, RandomSearch

STRATEGIES: dict[str, type[Strategy]] = {s.name: s for s in (BruteForce, RandomSearch)}
DEFAULT_STRATEGY = "random"

__all__ = [
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "BruteForce",
    "RandomSearch",
    "Strategy",
    "strategy_class",
]


def strategy_class(name: str | None) -> type[Strategy]:
    """The strategy called ``name`` (None: the default)."""
    try:
        return STRATEGIES[name or DEFAULT_STRATEGY]
    except KeyError:
        raise PerfportError(
            f"no strategy {name!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None
