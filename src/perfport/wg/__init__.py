"""Layer 5: work-group-size prediction (cummins2016 and beyond), end to end: the stencil
scenarios and their collection, datasets (from a store, a file or Cummins' pilot CSV), the
predictors (``perfport.wg.predictors``: classifiers with fallbacks, runtime, speedup and
performance regressors, performance vectors from nearest neighbours or a forest), the default
model and its cache, prediction for a new scenario, evaluation and the paper's figures.
scikit-learn: pip install 'perfport[models]'."""

from perfport._core.stats import geomean
from perfport.wg.collection import CollectProgress, collect
from perfport.wg.dataset import (
    WgDataset,
    common_columns,
    load_archive,
    load_cummins_csv,
    load_dataset,
    match_scenarios,
    merge_datasets,
    replace_scenarios,
    save_dataset,
)
from perfport.wg.evaluate import (
    DEFAULT_METHODS,
    PARTITIONS,
    EvalProgress,
    EvalResult,
    evaluate,
    folds,
    reference_baseline,
)
from perfport.wg.from_store import dataset_from_store
from perfport.wg.model import (
    DEFAULT_METHOD,
    WgModel,
    dataset_path,
    default_model,
    load_model,
    model_or_default,
    train,
)
from perfport.wg.predict import (
    WgPrediction,
    WgQuestion,
    check_scenario,
    predict_wg,
    predict_wg_many,
    refused_sizes,
)
from perfport.wg.predictors import (
    CLASSIFIERS,
    FALLBACKS,
    METHODS,
    REGRESSORS,
    VECTOR_METHODS,
    UnknownMethodError,
    WgClassifier,
    WgPerformanceForest,
    WgPerformanceKnn,
    WgPredictor,
    WgRegressor,
    baseline_column,
    make_predictor,
    regret_weights,
)
from perfport.wg.scenarios import REAL_WORLD, Scenario

__all__ = [
    "CLASSIFIERS",
    "DEFAULT_METHOD",
    "DEFAULT_METHODS",
    "FALLBACKS",
    "METHODS",
    "PARTITIONS",
    "REAL_WORLD",
    "REGRESSORS",
    "VECTOR_METHODS",
    "CollectProgress",
    "EvalProgress",
    "EvalResult",
    "Scenario",
    "UnknownMethodError",
    "WgClassifier",
    "WgDataset",
    "WgModel",
    "WgPerformanceForest",
    "WgPerformanceKnn",
    "WgPrediction",
    "WgPredictor",
    "WgQuestion",
    "WgRegressor",
    "baseline_column",
    "check_scenario",
    "collect",
    "common_columns",
    "dataset_from_store",
    "dataset_path",
    "default_model",
    "evaluate",
    "folds",
    "geomean",
    "load_archive",
    "load_cummins_csv",
    "load_dataset",
    "load_model",
    "make_predictor",
    "match_scenarios",
    "merge_datasets",
    "model_or_default",
    "predict_wg",
    "predict_wg_many",
    "reference_baseline",
    "refused_sizes",
    "regret_weights",
    "replace_scenarios",
    "save_dataset",
    "train",
]
