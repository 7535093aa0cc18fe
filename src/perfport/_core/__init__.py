"""Layer 0: records and contracts shared by every layer. Imports nothing else of perfport.

Names are imported on first use, so that ``from perfport._core import PerfportError`` (as the
command line does before it knows what will run) does not import numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfport._core.lazy import lazy_exports

if TYPE_CHECKING:
    from perfport._core.args import ArrayArg, Init, LocalArg, ScalarArg
    from perfport._core.checking import ReferenceKernel, Verify
    from perfport._core.errors import (
        BuildError,
        DeviceError,
        ExpressionError,
        LaunchError,
        MissingExtra,
        PerfportError,
        SpecError,
        StoreError,
    )
    from perfport._core.estimator import Estimator
    from perfport._core.expr import Expr
    from perfport._core.not_fitted import NotFittedError
    from perfport._core.outcome import Check, Outcome
    from perfport._core.records import (
        Backend,
        Config,
        DeviceInfo,
        DeviceType,
        Language,
        Measurement,
        Problem,
        Value,
        distinct_values,
        value_key,
    )
    from perfport._core.spec import (
        Geometry,
        KernelSpec,
        Param,
        ParamKind,
        Reference,
    )
    from perfport._core.splitting import SplitArray, SplitDim
    from perfport._core.stats import Stats, summarize
    from perfport._core.version import __version__

_EXPORTS = {
    "BuildError": "perfport._core.errors",
    "DeviceError": "perfport._core.errors",
    "ExpressionError": "perfport._core.errors",
    "LaunchError": "perfport._core.errors",
    "MissingExtra": "perfport._core.errors",
    "PerfportError": "perfport._core.errors",
    "SpecError": "perfport._core.errors",
    "StoreError": "perfport._core.errors",
    "Estimator": "perfport._core.estimator",
    "Expr": "perfport._core.expr",
    "NotFittedError": "perfport._core.not_fitted",  # imports scikit-learn, where installed
    "ReferenceKernel": "perfport._core.checking",
    "Verify": "perfport._core.checking",
    "Outcome": "perfport._core.outcome",
    "Check": "perfport._core.outcome",
    "Backend": "perfport._core.records",
    "Config": "perfport._core.records",
    "DeviceInfo": "perfport._core.records",
    "DeviceType": "perfport._core.records",
    "Language": "perfport._core.records",
    "Measurement": "perfport._core.records",
    "Problem": "perfport._core.records",
    "Value": "perfport._core.records",
    "value_key": "perfport._core.records",
    "distinct_values": "perfport._core.records",
    "ArrayArg": "perfport._core.args",
    "Geometry": "perfport._core.spec",
    "Init": "perfport._core.args",
    "KernelSpec": "perfport._core.spec",
    "LocalArg": "perfport._core.args",
    "Param": "perfport._core.spec",
    "ParamKind": "perfport._core.spec",
    "Reference": "perfport._core.spec",
    "ScalarArg": "perfport._core.args",
    "SplitArray": "perfport._core.splitting",
    "SplitDim": "perfport._core.splitting",
    "Stats": "perfport._core.stats",
    "summarize": "perfport._core.stats",
    "__version__": "perfport._core.version",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ArrayArg",
    "Backend",
    "BuildError",
    "Check",
    "Config",
    "DeviceError",
    "DeviceInfo",
    "DeviceType",
    "Estimator",
    "Expr",
    "ExpressionError",
    "Geometry",
    "Init",
    "KernelSpec",
    "Language",
    "LaunchError",
    "LocalArg",
    "Measurement",
    "MissingExtra",
    "NotFittedError",
    "Outcome",
    "Param",
    "ParamKind",
    "PerfportError",
    "Problem",
    "Reference",
    "ReferenceKernel",
    "ScalarArg",
    "SpecError",
    "SplitArray",
    "SplitDim",
    "Stats",
    "StoreError",
    "Value",
    "Verify",
    "__version__",
    "distinct_values",
    "summarize",
    "value_key",
]
