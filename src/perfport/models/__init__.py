"""Layer 3: learned predictors (work-group-size classifiers with fallbacks, runtime, speedup
and performance regressors, performance vectors from neighbours, nearest or chosen by a
forest) and their evaluation. scikit-learn: pip install 'perfport[models]'."""

from perfport._core.stats import geomean
from perfport.models.evaluate import PARTITIONS, EvalResult, evaluate, folds, reference_baseline
from perfport.models.wg import (
    CLASSIFIERS,
    FALLBACKS,
    METHODS,
    REGRESSORS,
    VECTOR_METHODS,
    WgClassifier,
    WgPredictor,
    WgRegressor,
    baseline_column,
    make_predictor,
    regret_weights,
)
from perfport.models.wgdata import (
    WgDataset,
    common_columns,
    load_cummins_csv,
    load_dataset,
    match_scenarios,
    merge_datasets,
    replace_scenarios,
    save_dataset,
)
from perfport.models.wgforest import WgPerformanceForest
from perfport.models.wgstore import dataset_from_store
from perfport.models.wgvector import WgPerformanceKnn

__all__ = [
    "CLASSIFIERS",
    "FALLBACKS",
    "METHODS",
    "PARTITIONS",
    "REGRESSORS",
    "VECTOR_METHODS",
    "EvalResult",
    "WgClassifier",
    "WgDataset",
    "WgPerformanceForest",
    "WgPerformanceKnn",
    "WgPredictor",
    "WgRegressor",
    "baseline_column",
    "common_columns",
    "dataset_from_store",
    "evaluate",
    "folds",
    "geomean",
    "load_cummins_csv",
    "load_dataset",
    "make_predictor",
    "match_scenarios",
    "merge_datasets",
    "reference_baseline",
    "regret_weights",
    "replace_scenarios",
    "save_dataset",
]
