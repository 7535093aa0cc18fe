"""Layer 0: records and contracts shared by every layer. Imports nothing else of perfport."""

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
from perfport._core.expr import Expr
from perfport._core.outcome import Outcome
from perfport._core.records import (
    Backend,
    Config,
    DeviceInfo,
    DeviceType,
    Language,
    Measurement,
    Problem,
    Value,
)
from perfport._core.spec import (
    ArrayArg,
    Geometry,
    Init,
    KernelSpec,
    LocalArg,
    Param,
    ParamKind,
    Reference,
    ScalarArg,
)
from perfport._core.stats import Stats, summarize
from perfport._core.version import __version__

__all__ = [
    "ArrayArg",
    "Backend",
    "BuildError",
    "Config",
    "DeviceError",
    "DeviceInfo",
    "DeviceType",
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
    "Outcome",
    "Param",
    "ParamKind",
    "PerfportError",
    "Problem",
    "Reference",
    "ScalarArg",
    "SpecError",
    "Stats",
    "StoreError",
    "Value",
    "__version__",
    "summarize",
]
