"""Layer 5: calibrated analytical performance models (Stevens and Klöckner): kernel
statistics from loopy, features named as in the paper, model formulas, calibration by
Levenberg-Marquardt, prediction. loopy, islpy and scipy: pip install 'perfport[model]'
(imported only when statistics are gathered or a model is calibrated)."""

from perfport.model.apps import APPLICATIONS, AppKernel, load_program, matmul
from perfport.model.cache import StatsCache
from perfport.model.calibrate import Calibration, Measurement, Prediction, calibrate, predict
from perfport.model.counts import (
    EvaluatedMem,
    EvaluatedStats,
    Granularity,
    KernelStats,
    MemCount,
    OpCount,
    SyncCount,
    SyncKind,
)
from perfport.model.errors import ModelError
from perfport.model.features import Feature, FeatureKind, FeatureSet, parse_feature
from perfport.model.gather import SUBGROUP_SIZE, gather
from perfport.model.model import Model, input_features, linear_model, overlap_model, step

__all__ = [
    "APPLICATIONS",
    "SUBGROUP_SIZE",
    "AppKernel",
    "Calibration",
    "EvaluatedMem",
    "EvaluatedStats",
    "Feature",
    "FeatureKind",
    "FeatureSet",
    "Granularity",
    "KernelStats",
    "Measurement",
    "MemCount",
    "Model",
    "ModelError",
    "OpCount",
    "Prediction",
    "StatsCache",
    "SyncCount",
    "SyncKind",
    "calibrate",
    "gather",
    "input_features",
    "linear_model",
    "load_program",
    "matmul",
    "overlap_model",
    "parse_feature",
    "predict",
    "step",
]
