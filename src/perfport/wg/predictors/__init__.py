"""Work-group-size predictors (cummins2016 and beyond): one module per family, and a registry
that builds each by its method name."""

from perfport.wg.predictors.base import UnknownMethodError, WgPredictor, baseline_column
from perfport.wg.predictors.classifier import (
    CLASSIFIERS,
    FALLBACKS,
    WgClassifier,
    regret_weights,
)
from perfport.wg.predictors.forest import WgPerformanceForest
from perfport.wg.predictors.k_nearest_neighbours import WgPerformanceKnn
from perfport.wg.predictors.novelty import DeviceNovelty
from perfport.wg.predictors.registry import (
    METHODS,
    REGISTRY,
    VECTOR_METHODS,
    Method,
    check_method,
    make_predictor,
)
from perfport.wg.predictors.regressor import REGRESSORS, WgRegressor

__all__ = [
    "CLASSIFIERS",
    "FALLBACKS",
    "METHODS",
    "REGISTRY",
    "REGRESSORS",
    "VECTOR_METHODS",
    "DeviceNovelty",
    "Method",
    "UnknownMethodError",
    "WgClassifier",
    "WgPerformanceForest",
    "WgPerformanceKnn",
    "WgPredictor",
    "WgRegressor",
    "baseline_column",
    "check_method",
    "make_predictor",
    "regret_weights",
]
