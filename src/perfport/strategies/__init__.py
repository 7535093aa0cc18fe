"""Layer 3: search strategies as pure ask/tell objects (no I/O, devices or store)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfport._core import PerfportError
from perfport._core.errors import first_line
from perfport.space import Space
from perfport.strategies.alternating import AlternatingBayes
from perfport.strategies.base import Strategy, StrategyError, checked_ask, checked_plan
from perfport.strategies.basic import BruteForce, Listed, RandomSearch
from perfport.strategies.bayes import BayesianOptimization, BayesRandomForest, TrustRegionBayes
from perfport.strategies.crossover import CrossoverBayes
from perfport.strategies.mixed import MixedBayes
from perfport.strategies.model_guided import ModelGuided, Ranker
from perfport.strategies.neighbourhood import LocalSearch, SimulatedAnnealing
from perfport.strategies.optuna_samplers import OptunaCmaEs, OptunaGP, OptunaQMC, OptunaTPE
from perfport.strategies.ordered import GridSearch, PriorGuided, PriorRegion
from perfport.strategies.population import DifferentialEvolution, GeneticAlgorithm
from perfport.strategies.portfolio import Portfolio
from perfport.strategies.sweep import SweepBayes
from perfport.strategies.thompson import ThompsonBayes
from perfport.strategies.transfer import TransferPrior

STRATEGIES: dict[str, type[Strategy]] = {
    s.name: s
    for s in (
        BruteForce,
        RandomSearch,
        GridSearch,
        LocalSearch,
        SimulatedAnnealing,
        GeneticAlgorithm,
        DifferentialEvolution,
        BayesianOptimization,
        BayesRandomForest,
        TrustRegionBayes,
        Portfolio,
        MixedBayes,
        CrossoverBayes,
        AlternatingBayes,
        ThompsonBayes,
        SweepBayes,
        PriorGuided,
        TransferPrior,
        PriorRegion,
        # Optuna's samplers: optuna is imported only when one is built (the optuna extra).
        OptunaTPE,
        OptunaGP,
        OptunaCmaEs,
        OptunaQMC,
    )
}
# Strategies that need more than a space and a seed: a ranker (a calibrated model of the
# kernel, built above this layer). Not in STRATEGIES, whose every entry runs on its own.
GUIDED: dict[str, type[Strategy]] = {ModelGuided.name: ModelGuided}
# Chosen by measurement (docs/results/2026-11-22-strategies.md, 2026-11-26-bayes-sweep.md):
# with other devices' results in the store it needs far fewer evaluations than any strategy
# without them; with none it is exactly bayes_sweep, the best of those.
DEFAULT_STRATEGY = "prior"

__all__ = [
    "DEFAULT_STRATEGY",
    "GUIDED",
    "STRATEGIES",
    "AlternatingBayes",
    "BayesRandomForest",
    "BayesianOptimization",
    "BruteForce",
    "CrossoverBayes",
    "DifferentialEvolution",
    "GeneticAlgorithm",
    "GridSearch",
    "Listed",
    "LocalSearch",
    "MixedBayes",
    "ModelGuided",
    "OptunaCmaEs",
    "OptunaGP",
    "OptunaQMC",
    "OptunaTPE",
    "Portfolio",
    "PriorGuided",
    "PriorRegion",
    "RandomSearch",
    "Ranker",
    "SimulatedAnnealing",
    "Strategy",
    "StrategyError",
    "SweepBayes",
    "ThompsonBayes",
    "TransferPrior",
    "TrustRegionBayes",
    "checked_ask",
    "checked_plan",
    "is_own_strategy",
    "make_strategy",
    "strategy_class",
]


def make_strategy(
    cls: type[Strategy],
    space: Space,
    seed: int,
    scores: Sequence[float] | np.ndarray | None = None,
    ranker: Ranker | None = None,
) -> Strategy:
    """An instance of ``cls``; prior ``scores`` and a ``ranker`` go to a strategy that takes
    them. A class of the user's own that cannot be built is a one-line StrategyError."""
    try:
        if cls.takes_ranker:
            built = cls(space, seed, ranker=ranker)  # type: ignore[call-arg]
        else:
            built = cls(space, seed, scores=scores) if cls.takes_prior else cls(space, seed)  # type: ignore[call-arg]
    except Exception as exc:
        if not is_own_strategy(cls) or isinstance(exc, PerfportError):
            raise
        raise StrategyError(
            f"strategy {cls.name} cannot be built: {type(exc).__name__}: {first_line(exc)}; "
            "its class must define ask(), and its __init__ take (space, seed) and call "
            "super().__init__(space, seed) (docs/search.md, 'Your own strategy')"
        ) from None
    if not isinstance(getattr(built, "told", None), dict):
        raise StrategyError(
            f"strategy {cls.name}: its __init__ does not call super().__init__(space, seed), "
            "which sets up what it is told (self.told); call it first"
        )
    return built


def is_own_strategy(cls: type[Strategy]) -> bool:
    """Whether ``cls`` is a strategy class of the user's own (not one of perfport's)."""
    return cls is not Listed and cls not in {*STRATEGIES.values(), *GUIDED.values()}


def strategy_class(name: str | type[Strategy] | None) -> type[Strategy]:
    """The strategy called ``name`` (None: the default), or ``name`` itself when it is a
    Strategy class of the user's own (its ``name`` keys its campaigns, so it must be its own)."""
    if isinstance(name, type):
        return _own_strategy(name)
    if isinstance(name, Strategy):  # built already, for some space and seed: not this run's
        cls = type(name).__name__
        raise StrategyError(
            f"strategy {getattr(name, 'name', cls)!r} was given as an instance of {cls}; pass the class "
            f"(strategy={cls}): perfport builds it for each campaign's space and seed"
        )
    try:
        # Only None is the default: '' (an unset $STRATEGY in a script) is a name, refused.
        return {**STRATEGIES, **GUIDED}[DEFAULT_STRATEGY if name is None else name]
    except KeyError:
        raise PerfportError(
            f"no strategy {name!r}; choose one of {', '.join([*STRATEGIES, *GUIDED])}"
        ) from None


def _own_strategy(cls: type) -> type[Strategy]:
    if not issubclass(cls, Strategy):
        raise PerfportError(
            f"{cls.__name__} is not a search strategy; subclass perfport.strategies.Strategy "
            "(docs/search.md, 'Your own strategy')"
        )
    label = getattr(cls, "name", None)
    if not isinstance(label, str) or not label.strip():
        raise PerfportError(
            f'strategy class {cls.__name__} needs a name (a class attribute, name = "..."): '
            "it keys the campaigns it runs"
        )
    known = {**STRATEGIES, **GUIDED}.get(label)
    if known is not None and known is not cls:
        raise PerfportError(
            f"strategy class {cls.__name__} is named {label!r}, as one of perfport's; give it a "
            "name of its own (its campaigns would resume perfport's)"
        )
    return cls
