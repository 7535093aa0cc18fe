"""Whether a failed launch is a refusal or a fault: a pure function of the driver's error
code and of when it came, the same for OpenCL and CUDA, so that it is tested without a GPU.

A refusal happens before anything runs: the driver will not start this shape (invalid
work-group size, out of resources at launch). It says something about the configuration and
feeds the work-group predictor's fallbacks. A fault happens while the kernel runs, or is an
error a refusal cannot explain (an illegal address, a command queue dead after the launch, a
launch failure): it says something about the kernel, and is stored as ``crashed``.
"""

from __future__ import annotations

import re
from enum import Enum


class LaunchPhase(Enum):
    """When an error came: from the call that starts the launch, or afterwards (waiting for
    it, or a later launch reporting an earlier one's fault)."""

    ENQUEUE = "enqueue"
    EXECUTION = "execution"


# Codes that mean "this shape cannot start", without the API's prefix (CL_, CUDA_ERROR_,
# cudaError). Only at ENQUEUE: NVIDIA's OpenCL also reports a kernel's out-of-bounds access as
# OUT_OF_RESOURCES when the queue is waited for.
REFUSALS = frozenset(
    {
        "INVALID_WORK_GROUP_SIZE",
        "INVALID_WORK_ITEM_SIZE",
        "INVALID_GLOBAL_WORK_SIZE",
        "INVALID_GLOBAL_OFFSET",
        "OUT_OF_RESOURCES",
        "MEM_OBJECT_ALLOCATION_FAILURE",
        "INVALID_CONFIGURATION",
        "LAUNCH_OUT_OF_RESOURCES",
        "INVALID_VALUE",  # CUDA's answer to a block larger than the device allows
        "NO_CONSTANT_SYMBOL",  # perfport's own checks before a CUDA launch
        "CONSTANT_TOO_SMALL",
    }
)
_PREFIX = re.compile(r"^(?:CL_|CUDA_ERROR_|cudaError_?|CUDA_)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def normalise_code(code: str) -> str:
    """'CL_INVALID_WORK_GROUP_SIZE', 'CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES' and
    'cudaErrorLaunchOutOfResources' -> 'INVALID_WORK_GROUP_SIZE', 'LAUNCH_OUT_OF_RESOURCES'."""
    bare = _PREFIX.sub("", code.strip())
    if not bare.isupper():  # the runtime API's CamelCase
        bare = _CAMEL.sub("_", bare)
    return bare.upper()


def is_refusal(code: str, phase: LaunchPhase) -> bool:
    """True when the driver refused to start the launch: a refusal code at ENQUEUE. Every
    other failure (any code after the launch started, any other code) is a fault."""
    return phase is LaunchPhase.ENQUEUE and normalise_code(code) in REFUSALS


def cuda_error_code(message: str, fallback: str) -> str:
    """The code at the head of a CuPy error's message: 'CUDA_ERROR_ILLEGAL_ADDRESS: an
    illegal memory access ...' (driver API) or 'cudaErrorIllegalAddress: ...' (runtime API);
    ``fallback`` (the exception's type name) when there is none."""
    head = message.split(":", 1)[0].strip()
    return head if head.lower().startswith("cuda") and " " not in head else fallback
