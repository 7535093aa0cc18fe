"""Application kernels of the paper written in loopy, and loopy kernels from the user's files.

A kernel file is a Python file that defines either ``kernel`` (a loopy program or kernel) or
``make_kernel()`` (a function of no arguments that returns one); ``perfport model stats
FILE.py`` counts it. Built in: square matrix multiplication with and without prefetching
(the paper's section 8.3), by name ``matmul-prefetch`` and ``matmul-noprefetch``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.errors import SpecError
from perfport.kernels.loader import import_file
from perfport.model.gather import loopy


@dataclass(frozen=True)
class AppKernel:
    """A built-in application kernel: how to make it, and its numpy reference."""

    name: str
    doc: str
    make: Callable[[], Any]
    reference: Callable[..., np.ndarray]
    inputs: Callable[[int, np.random.Generator], dict[str, np.ndarray]]


def matmul(prefetch: bool, tile: int = 16, dtype: str = "float32") -> Any:
    """``c = a @ b`` for n x n matrices, one work-item per element of c in tile x tile
    work-groups (n a multiple of tile). ``prefetch`` stages tiles of a and b through local
    memory (two barriers per tile of k); without it, every product reads global memory and
    k is not split. The global loads carry the tags aLD and bLD (loopy keeps them where the
    load stays in the kernel, so only without prefetching)."""
    lp = loopy()
    knl = lp.make_kernel(
        "{[i,j,k]: 0<=i,j,k<n}",
        "c[i, j] = sum(k, a$aLD[i, k] * b$bLD[k, j])",
        [lp.GlobalArg("a,b,c", np.dtype(dtype), shape=("n", "n")), ...],
        name="matmul_prefetch" if prefetch else "matmul",
        lang_version=(2018, 2),
    )
    knl = lp.assume(knl, f"n >= {tile} and n mod {tile} = 0")
    knl = lp.split_iname(knl, "i", tile, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", tile, outer_tag="g.0", inner_tag="l.0")
    if prefetch:
        knl = lp.split_iname(knl, "k", tile)
        knl = lp.add_prefetch(knl, "a", ["i_inner", "k_inner"], default_tag="l.auto")
        knl = lp.add_prefetch(knl, "b", ["k_inner", "j_inner"], default_tag="l.auto")
        # Each fetch runs in every work-group though it indexes only one group axis.
        knl = lp.add_inames_for_unused_hw_axes(knl)
    return knl


def _matmul_inputs(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {name: rng.standard_normal((n, n)).astype(np.float32) for name in ("a", "b")}


def _matmul_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a @ b


APPLICATIONS: dict[str, AppKernel] = {
    app.name: app
    for app in (
        AppKernel(
            "matmul-prefetch",
            "square matmul, 16x16 tiles of a and b staged in local memory",
            lambda: matmul(prefetch=True),
            _matmul_reference,
            _matmul_inputs,
        ),
        AppKernel(
            "matmul-noprefetch",
            "square matmul, every product read from global memory",
            lambda: matmul(prefetch=False),
            _matmul_reference,
            _matmul_inputs,
        ),
    )
}


def load_program(kernel: str) -> Any:
    """The loopy program a name (built-in) or a ``.py`` kernel file stands for."""
    if kernel in APPLICATIONS:
        return APPLICATIONS[kernel].make()
    path = Path(kernel)
    if path.suffix != ".py" or not path.is_file():
        known = ", ".join(sorted(APPLICATIONS))
        raise SpecError(
            f"{kernel!r} is neither a built-in kernel ({known}) nor a .py file defining a "
            "loopy kernel; give one of those"
        )
    module = import_file(path)
    made = getattr(module, "kernel", None)
    factory = getattr(module, "make_kernel", None)
    if made is None and callable(factory):
        try:
            made = factory()
        except Exception as exc:  # the user's code: any failure is a bad file, in one line
            raise SpecError(
                f"{path}: make_kernel() raised {type(exc).__name__}: {exc}; fix the file"
            ) from None
    lp = loopy()
    if not isinstance(made, lp.TranslationUnit | lp.LoopKernel):
        raise SpecError(
            f"{path}: define 'kernel' (a loopy kernel) or 'make_kernel()' returning one; "
            f"found {type(made).__name__}"
        )
    return made


def run_on(queue: Any, app: AppKernel, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Run a built-in kernel at size n on an OpenCL queue; (its result, numpy's)."""
    inputs = app.inputs(n, np.random.default_rng(seed))
    program = app.make()
    _, outputs = program(queue, out_host=True, **inputs)
    return np.asarray(outputs[0]), (app.reference(**inputs))
