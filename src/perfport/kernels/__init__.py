"""Layer 1: the built-in kernel library and kernel-spec files.

Built-ins: ``stencil`` (SkelCL-style, cummins2016), ``matmul`` (Lawson's tiled GEMM),
``convolution`` (erdem2018's 1D convolution), ``vector_add`` (smoke tests), and cummins2016's
stencil scenarios: ``synthetic``, ``gaussian``, ``gol``, ``heat``, ``nms``, ``sobel``,
``threshold``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from perfport._core import KernelSpec, SpecError
from perfport.kernels.convolution import convolution
from perfport.kernels.loader import load_kernel
from perfport.kernels.matmul import matmul
from perfport.kernels.problems import load_problems, problem_sets
from perfport.kernels.stencil import make_stencil, stencil
from perfport.kernels.stencils import STENCILS
from perfport.kernels.vector_add import vector_add

BUILTINS: dict[str, Callable[[], KernelSpec]] = {
    "stencil": stencil,
    "matmul": matmul,
    "convolution": convolution,
    "vector_add": vector_add,
    **STENCILS,
}

__all__ = [
    "BUILTINS",
    "builtin",
    "load_kernel",
    "load_problems",
    "make_stencil",
    "problem_sets",
    "resolve_kernel",
]


def builtin(name: str) -> KernelSpec:
    """A built-in kernel by name."""
    try:
        return BUILTINS[name]()
    except KeyError:
        raise SpecError(
            f"no built-in kernel {name!r}; built-ins: {', '.join(BUILTINS)} (or give a spec file path)"
        ) from None


def resolve_kernel(kernel: KernelSpec | str | Path) -> KernelSpec:
    """A KernelSpec as is, a built-in by name, or a spec file by path."""
    if isinstance(kernel, KernelSpec):
        return kernel
    text = str(kernel)
    if text in BUILTINS:
        return builtin(text)
    if Path(text).suffix.lower() in (".py", ".toml", ".yaml", ".yml") or Path(text).exists():
        return load_kernel(text)
    return builtin(text)
