"""The work each built-in kernel does, as expressions of its problem: the bytes it must move
(each input read once, each output written once: the least any configuration can move) and
the floating-point operations it must do. Kept apart from the kernels' definitions so that
their tunables can change without touching this, and applied by ``builtin``.

The stencils state bytes only: their bodies (a Game of Life, a Sobel filter) are not all
floating-point multiply-adds, and they are memory-bound at every size perfport tunes.
"""

from __future__ import annotations

import dataclasses

from perfport._core import KernelSpec
from perfport.kernels.stencil import OUT_DTYPE
from perfport.kernels.stencils import STENCILS

_STENCIL = (f"width * height * (sizeof(dtype) + sizeof({OUT_DTYPE}))", None)

# name -> (bytes, flops); None: not stated
WORK: dict[str, tuple[str, str | None]] = {
    "vector_add": ("3 * n * sizeof(dtype)", "n"),
    "convolution": ("sizeof(dtype) * (2 * n + 2 * mask - 1)", "2 * n * mask"),
    "convolution_wide": ("sizeof(dtype) * (2 * n + 2 * mask - 1)", "2 * n * mask"),
    "convolution2d": (
        "4 * (width * height + (height + filter_height - 1) * (width + filter_width - 1) "
        "+ filter_height * filter_width)",
        "2 * width * height * filter_width * filter_height",
    ),
    "matmul": ("sizeof(dtype) * batch * (M * K + K * N + M * N)", "2 * batch * M * N * K"),
    "matmul_tiled": (
        "sizeof(dtype) * batch * (M * K + K * N + M * N)",
        "2 * batch * M * N * K",
    ),
    "stencil": _STENCIL,
    "stencil_wide": _STENCIL,
    "stencil_cross": _STENCIL,
    **dict.fromkeys(STENCILS, _STENCIL),
}


def with_work(spec: KernelSpec) -> KernelSpec:
    """The built-in ``spec`` with its work stated (unchanged if it states its own)."""
    if spec.name not in WORK or spec.bytes is not None or spec.flops is not None:
        return spec
    bytes_, flops = WORK[spec.name]
    return dataclasses.replace(spec, bytes=bytes_, flops=flops)
