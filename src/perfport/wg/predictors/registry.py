"""Every work-group-size method by name: its constructor and keyword arguments.

The names are a command-line contract (``perfport wg train --method``, ``wg evaluate
--methods``) and the ``method`` of saved models: add names, never rename one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from perfport.wg.predictors.base import UnknownMethodError, WgPredictor
from perfport.wg.predictors.classifier import CLASSIFIERS, FALLBACKS, WgClassifier
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.k_nearest_neighbours import WgPerformanceKnn
from perfport.wg.predictors.regressor import REGRESSORS, WgRegressor

NOVELTY_LEVEL = 0.05  # performance_forest+novel's level: a conventional one


@dataclass(frozen=True)
class Method:
    """How to build one method's predictor: ``build(**kwargs)``, plus ``seed=`` where
    ``seeded`` (the randomised methods)."""

    build: Callable[..., WgPredictor]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    seeded: bool = True

    def make(self, seed: int = 0) -> WgPredictor:
        return self.build(**self.kwargs, **({"seed": seed} if self.seeded else {}))


def _classifiers(weighted: bool) -> dict[str, Method]:
    suffix = "_weighted" if weighted else ""
    return {
        f"{c}{suffix}+{f}": Method(
            WgClassifier, {"classifier": c, "fallback": f, "weighted": weighted}
        )
        for c in CLASSIFIERS
        for f in FALLBACKS
    }


# Beyond the paper: the whole performance vector (k-nearest-neighbour and forest).
_VECTOR_METHODS: dict[str, Method] = {
    "performance_knn": Method(WgPerformanceKnn, {"fallback": False}, seeded=False),
    "performance_knn+fixed": Method(WgPerformanceKnn, {"fallback": True}, seeded=False),
    "performance_forest": Method(WgPerformanceForest, {"fallback": False}),
    "performance_forest+fixed": Method(WgPerformanceForest, {"fallback": True}),
    "performance_forest+novel": Method(
        WgPerformanceForest, {"fallback": True, "novelty": NOVELTY_LEVEL}
    ),
    # The same forest; CPUs are one device class for the novelty test and the fallback.
    "performance_forest+novel_cpu": Method(
        WgPerformanceForest, {"fallback": True, "novelty": NOVELTY_LEVEL, "cpu_class": True}
    ),
}

REGISTRY: Mapping[str, Method] = MappingProxyType(
    {
        **_classifiers(weighted=False),
        **_classifiers(weighted=True),
        **{f"{r}_regressor": Method(WgRegressor, {"target": r}) for r in REGRESSORS},
        **_VECTOR_METHODS,
    }
)
METHODS: tuple[str, ...] = tuple(REGISTRY)
VECTOR_METHODS: tuple[str, ...] = tuple(_VECTOR_METHODS)

# A classifier named without its fallback takes nearest_neighbour (accepted, never listed).
_SHORT_NAMES = {
    f"{c}{suffix}": f"{c}{suffix}+nearest_neighbour"
    for c in CLASSIFIERS
    for suffix in ("", "_weighted")
}


def check_method(name: str) -> str:
    """``name``'s entry in ``METHODS`` (a classifier named without its fallback gets
    nearest_neighbour); UnknownMethodError (one line, a ValueError too) for a name that is
    none."""
    if isinstance(name, str) and _SHORT_NAMES.get(name, name) in REGISTRY:
        return _SHORT_NAMES.get(name, name)
    raise UnknownMethodError(f"unknown method {name!r}; methods: {', '.join(METHODS)}")


def make_predictor(name: str, seed: int = 0) -> WgPredictor:
    """An unfitted predictor of the method ``name`` (one of ``METHODS``)."""
    return REGISTRY[check_method(name)].make(seed)
