"""Layer 2: features of scenarios (device, kernel, dataset) as plain numeric vectors.
Kernel features need PoCL (the LLVM front end) and llvmlite: pip install 'perfport[features]'."""

from perfport.features.cache import FeatureCache
from perfport.features.ir import (
    CLASS_NAMES,
    bitcode_of,
    class_counts,
    instruction_classes,
    opcode_counts,
)
from perfport.features.vector import (
    COMPILE_FREE_FEATURES,
    DATASET_FEATURES,
    DEVICE_FEATURES,
    FEATURE_NAMES,
    KERNEL_FEATURES,
    Features,
    dataset_features,
    device_features,
    kernel_features,
    scenario_features,
)

__all__ = [
    "CLASS_NAMES",
    "COMPILE_FREE_FEATURES",
    "DATASET_FEATURES",
    "DEVICE_FEATURES",
    "FEATURE_NAMES",
    "KERNEL_FEATURES",
    "FeatureCache",
    "Features",
    "bitcode_of",
    "class_counts",
    "dataset_features",
    "device_features",
    "instruction_classes",
    "kernel_features",
    "opcode_counts",
    "scenario_features",
]
