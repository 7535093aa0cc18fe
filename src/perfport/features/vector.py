"""The feature vector of a scenario (kernel, problem, device), as in Cummins et al. 2016,
section 3.2: device properties from the OpenCL queries, kernel properties from its compiled
LLVM IR (instruction-class densities and the total) plus its border sizes, and the dataset's
size and element types. docs/features.md lists every feature."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core import ArrayArg, DeviceInfo, DeviceType, Expr, KernelSpec, Problem, SpecError
from perfport._core.dtypes import numpy_dtype
from perfport.features.cache import FeatureCache
from perfport.features.ir import CLASS_NAMES, instruction_classes

DEVICE_FEATURES = (
    "device_compute_units",
    "device_log2_max_work_group",
    "device_log2_local_mem",
    "device_is_cpu",
    "device_is_gpu",
    "device_subgroup",
    "device_log2_max_items_x",
    "device_log2_max_items_y",
)
KERNEL_FEATURES = (
    "kernel_instructions",
    *(f"kernel_density_{c}" for c in CLASS_NAMES),
    "kernel_north",
    "kernel_south",
    "kernel_east",
    "kernel_west",
)
DATASET_FEATURES = (
    "data_width",
    "data_height",
    "data_log2_cells",
    "data_in_bytes",
    "data_out_bytes",
    "data_in_float",
    "data_out_float",
)
FEATURE_NAMES: tuple[str, ...] = DEVICE_FEATURES + KERNEL_FEATURES + DATASET_FEATURES


# Features that need no compile: the device's queries, the borders and the data. A model
# trained on these alone (perfport wg train --compile-free) predicts without PoCL or llvmlite.
COMPILE_FREE_FEATURES: tuple[str, ...] = (
    *DEVICE_FEATURES,
    *("kernel_north", "kernel_south", "kernel_east", "kernel_west"),
    *DATASET_FEATURES,
)


@dataclass(frozen=True)
class Features:
    """Named numeric features; ``values`` follow ``names`` (by default ``FEATURE_NAMES``)."""

    values: tuple[float, ...]
    names: tuple[str, ...] = FEATURE_NAMES

    def as_array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=np.float64)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.values, strict=True))


def device_features(device: DeviceInfo) -> dict[str, float]:
    items = [*device.max_work_item_sizes, 1, 1]
    return {
        "device_compute_units": float(device.compute_units),
        "device_log2_max_work_group": math.log2(max(device.max_work_group_size, 1)),
        "device_log2_local_mem": math.log2(max(device.local_mem_bytes, 1)),
        "device_is_cpu": float(device.type is DeviceType.CPU),
        "device_is_gpu": float(device.type is DeviceType.GPU),
        "device_subgroup": float(device.subgroup_size or 0),
        "device_log2_max_items_x": math.log2(max(items[0], 1)),
        "device_log2_max_items_y": math.log2(max(items[1], 1)),
    }


def _borders(spec: KernelSpec, env: Mapping[str, Any]) -> list[float]:
    defines = dict(spec.define_exprs)
    return [
        float(defines[k].value(env)) if k in defines else 0.0
        for k in ("NORTH", "SOUTH", "EAST", "WEST")
    ]


def kernel_features(
    spec: KernelSpec,
    problem: Mapping[str, Any],
    cache: FeatureCache | None = None,
    compile: bool = True,
) -> dict[str, float]:
    """Instruction densities of the kernel as compiled for this problem (the default
    configuration's compile-time values), its instruction total and its border sizes. The
    counts come from ``cache`` when it holds them; ``compile=False`` gives the border sizes
    alone (COMPILE_FREE_FEATURES), with no compile."""
    env = spec.env(spec.default or {}, spec.problem.merged(problem))
    out: dict[str, float] = {}
    if compile:
        counts = instruction_classes(spec, spec.build_defines(env), cache)
        total = max(sum(counts.values()), 1)
        out["kernel_instructions"] = float(total)
        out.update({f"kernel_density_{c}": counts[c] / total for c in CLASS_NAMES})
    out.update(
        zip(
            ("kernel_north", "kernel_south", "kernel_east", "kernel_west"),
            _borders(spec, env),
            strict=True,
        )
    )
    return out


@functools.lru_cache(maxsize=4096)
def _expr(text: str, where: str) -> Expr:
    # Parsed once: a prediction daemon asks for the same few expressions at every request.
    return Expr(text, where)


def dataset_features(spec: KernelSpec, problem: Mapping[str, Any]) -> dict[str, float]:
    env = spec.env({}, spec.problem.merged(problem))
    arrays = [a for a in spec.args if isinstance(a, ArrayArg)]
    inputs = [a for a in arrays if not a.output] or arrays
    outputs = [a for a in arrays if a.output] or arrays
    in_dtype = numpy_dtype(_expr(inputs[0].dtype, spec.name).value(env))
    out_dtype = numpy_dtype(_expr(outputs[0].dtype, spec.name).value(env))
    shape = [int(_expr(s, spec.name).value(env)) for s in inputs[0].shape]
    if any(not 1 <= n < 2**31 for n in shape):  # kernels index with 32-bit ints
        raise SpecError(
            f"kernel {spec.name}: argument {inputs[0].name} has an unusable shape {shape}; "
            "give positive sizes below 2^31"
        )
    height, width = [1, *shape] if len(shape) == 1 else shape[-2:]
    return {
        "data_width": float(width),
        "data_height": float(height),
        "data_log2_cells": math.log2(max(width * height, 1)),
        "data_in_bytes": float(in_dtype.itemsize),
        "data_out_bytes": float(out_dtype.itemsize),
        "data_in_float": float(np.issubdtype(in_dtype, np.floating)),
        "data_out_float": float(np.issubdtype(out_dtype, np.floating)),
    }


def scenario_features(
    spec: KernelSpec,
    problem: Problem | Mapping[str, Any],
    device: DeviceInfo,
    cache: FeatureCache | None = None,
    names: tuple[str, ...] = FEATURE_NAMES,
) -> Features:
    """The feature vector of running ``spec`` on ``problem`` on ``device``: every feature, or
    those of ``names`` in their order. The kernel is compiled (PoCL) only when ``names`` holds
    an instruction feature and ``cache`` does not hold its counts."""
    unknown = [n for n in names if n not in FEATURE_NAMES]
    if unknown:
        raise SpecError(f"unknown features {unknown[:3]}; perfport computes {FEATURE_NAMES}")
    compile = not set(names) <= set(COMPILE_FREE_FEATURES)
    values = {
        **device_features(device),
        **kernel_features(spec, problem, cache, compile),
        **dataset_features(spec, problem),
    }
    return Features(tuple(values[name] for name in names), names)
