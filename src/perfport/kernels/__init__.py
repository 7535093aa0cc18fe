"""Layer 1: the built-in kernel library and kernel-spec files.

Built-ins: ``stencil`` (SkelCL-style, cummins2016), ``stencil_wide`` (the same with
work per work-item and direct loads), ``stencil_cross`` (the 5-point stencil with
``stencil_wide``'s tunables), ``matmul`` (Lawson's tiled GEMM), ``matmul_tiled``
(local-memory tiles, register blocks, vector loads),
``convolution`` (erdem2018's 1D convolution), ``convolution_wide`` (the same with outputs per
work-item and direct loads), ``convolution2d`` (a tiled 2D convolution over
the benchmark hub's convolution_milo space), ``vector_add`` (smoke tests), and cummins2016's
stencil scenarios: ``synthetic``, ``gaussian``, ``gol``, ``heat``, ``nms``, ``sobel``,
``threshold``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from perfport._core import KernelSpec, SpecError
from perfport.kernels.convolution import convolution
from perfport.kernels.convolution2d import convolution2d
from perfport.kernels.convolution_wide import convolution_wide
from perfport.kernels.described import described_stencil, described_stencil_file
from perfport.kernels.loader import load_kernel
from perfport.kernels.matmul import matmul
from perfport.kernels.matmul_tiled import matmul_tiled
from perfport.kernels.problems import load_problems, problem_sets
from perfport.kernels.stencil import make_stencil, stencil
from perfport.kernels.stencil_cross import stencil_cross
from perfport.kernels.stencil_wide import make_wide_stencil, stencil_wide
from perfport.kernels.stencils import STENCILS
from perfport.kernels.vector_add import vector_add
from perfport.kernels.work import with_work

# The model's loopy kernels (loopy-matmul, ...): tuned by name, built by perfport.model.tunable.
LOOPY_PREFIX = "loopy-"
# Their names, here so that listing them needs no loopy (a test checks they are the model's).
LOOPY_BUILTINS = ("loopy-matmul", "loopy-dg", "loopy-fd")
# The define that picks one loopy program of a joined spec: how a spec built from loopy
# programs (a built-in or a user's loopy space file) is told from others.
LOOPY_CONFIG_DEFINE = "PERFPORT_LOOPY_CONFIG"


def is_loopy_spec(spec: KernelSpec) -> bool:
    """Whether ``spec`` joins loopy's programs (perfport.model.tunable)."""
    return any(name == LOOPY_CONFIG_DEFINE for name, _ in spec.defines)


BUILTINS: dict[str, Callable[[], KernelSpec]] = {
    "stencil": stencil,
    "stencil_wide": stencil_wide,
    "stencil_cross": stencil_cross,
    "matmul": matmul,
    "matmul_tiled": matmul_tiled,
    "convolution": convolution,
    "convolution_wide": convolution_wide,
    "convolution2d": convolution2d,
    "vector_add": vector_add,
    **STENCILS,
}

__all__ = [
    "BUILTINS",
    "builtin",
    "described_stencil",
    "load_kernel",
    "load_problems",
    "make_stencil",
    "make_wide_stencil",
    "problem_sets",
    "resolve_kernel",
]


def builtin(name: str) -> KernelSpec:
    """A built-in kernel by name."""
    try:
        make = BUILTINS[name]
    except KeyError:
        if name.startswith(LOOPY_PREFIX):  # built above this layer (perfport.model.tunable)
            raise SpecError(
                f"{name} is one of the model's loopy kernels: only 'perfport tune {name}' on "
                "one device tunes it (pip install 'perfport[model]')"
            ) from None
        raise SpecError(
            f"no built-in kernel {name!r}; built-ins: {', '.join(BUILTINS)}; loopy kernels "
            f"(perfport tune only): {', '.join(LOOPY_BUILTINS)} (or give a spec file path)"
        ) from None
    return with_work(make())


def resolve_kernel(kernel: KernelSpec | str | Path) -> KernelSpec:
    """A KernelSpec as is, a built-in by name, a spec file by path, or a stencil described in
    a ``.json`` file (``described_stencil``)."""
    if isinstance(kernel, KernelSpec):
        return kernel
    text = str(kernel)
    if text in BUILTINS:
        return builtin(text)
    if Path(text).suffix.lower() == ".json":
        return _described_stencil_file(Path(text))
    if Path(text).suffix.lower() in (".py", ".toml", ".yaml", ".yml") or Path(text).exists():
        return load_kernel(text)
    return builtin(text)


def _described_stencil_file(path: Path) -> KernelSpec:
    # A broken .json may be a search-space file meant for 'perfport space': say so here.
    return described_stencil_file(
        path, ", or to 'perfport space' a Kernel Tuner T1 or BAT search-space file"
    )
