"""Application kernels of the paper written in loopy, and loopy kernels from the user's files.

A kernel file is a Python file that defines either ``kernel`` (a loopy program or kernel) or
``make_kernel()`` (a function of no arguments that returns one); ``perfport model stats
FILE.py`` counts it. Built in: square matrix multiplication with and without prefetching
(the paper's section 8.3), by name ``matmul-prefetch`` and ``matmul-noprefetch``; the four
discontinuous-Galerkin differentiation variants (section 8.4, ``dg-plain``, ``dg-prefetch-u``,
``dg-prefetch-dm``, ``dg-prefetch-dm-tr``) and the two finite-difference variants (section
8.5, ``fd-16x16``, ``fd-18x18``), from ``paper_kernels``.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.errors import SpecError
from perfport.kernels.loader import import_file
from perfport.model.gather import loopy
from perfport.model.paper_kernels import (
    DG_VARIANTS,
    dg_diff,
    dg_inputs,
    dg_reference,
    fd_inputs,
    fd_reference,
    finite_diff,
    retag,
)


@dataclass(frozen=True)
class AppKernel:
    """A built-in application kernel: how to make it, and its numpy reference."""

    name: str
    doc: str
    make: Callable[[], Any]
    reference: Callable[..., np.ndarray]
    inputs: Callable[[int, np.random.Generator], dict[str, np.ndarray]]
    size: str = "n"  # the size parameter ``inputs`` is given
    small: int = 48  # a size its assumptions allow, small enough for a test
    sizes: tuple[int, ...] = (128, 256, 384, 512)  # sizes to measure on PoCL's 2 cores


def matmul(
    prefetch: bool,
    tile: int = 16,
    dtype: str = "float32",
    tile_j: int | None = None,
    tile_k: int | None = None,
) -> Any:
    """``c = a @ b`` for n x n matrices, one work-item per element of c in tile x tile
    work-groups (n a multiple of tile). ``prefetch`` stages tiles of a and b through local
    memory (two barriers per tile of k); without it, every product reads global memory and
    k is not split. The global loads carry the tags aLD and bLD without prefetching, aPF and
    bPF with it (loopy drops a tag where it stages the load; ``retag`` puts one back), so a
    model can tell the two access patterns apart. ``tile_j`` and ``tile_k`` (default
    ``tile``) make the tiles rectangular: work-groups of tile x tile_j, k staged tile_k at a
    time (the configuration space of model-guided search)."""
    import math

    tj, tk = tile_j or tile, tile_k or tile
    lp = loopy()
    knl = lp.make_kernel(
        "{[i,j,k]: 0<=i,j,k<n}",
        "c[i, j] = sum(k, a$aLD[i, k] * b$bLD[k, j])",
        [lp.GlobalArg("a,b,c", np.dtype(dtype), shape=("n", "n")), ...],
        name="matmul_prefetch" if prefetch else "matmul",
        lang_version=(2018, 2),
    )
    step = math.lcm(tile, tj, tk) if prefetch else math.lcm(tile, tj)
    knl = lp.assume(knl, f"n >= {step} and n mod {step} = 0")
    knl = lp.split_iname(knl, "i", tile, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", tj, outer_tag="g.0", inner_tag="l.0")
    if prefetch:
        knl = lp.split_iname(knl, "k", tk)
        knl = lp.add_prefetch(knl, "a", ["i_inner", "k_inner"], default_tag="l.auto")
        knl = lp.add_prefetch(knl, "b", ["k_inner", "j_inner"], default_tag="l.auto")
        # Each fetch runs in every work-group though it indexes only one group axis.
        knl = lp.add_inames_for_unused_hw_axes(knl)
        knl = retag(retag(knl, "a", "aPF"), "b", "bPF")
    return knl


_DG_DOCS = {
    "plain": "no local memory",
    "prefetch-u": "16x16 tiles of u staged in local memory",
    "prefetch-dm": "16x16 tiles of diff_mat staged in local memory",
    "prefetch-dm-tr": "tiles of diff_mat staged, u and res element-fastest",
}


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
        *(
            AppKernel(
                f"dg-{variant}",
                f"DG differentiation, {_DG_DOCS[variant]}",
                functools.partial(dg_diff, variant),
                dg_reference,
                functools.partial(dg_inputs, transposed=variant.endswith("-tr")),
                size="nelements",
                sizes=(4096, 8192, 16384, 32768),
            )
            for variant in DG_VARIANTS
        ),
        *(
            AppKernel(
                f"fd-{lsize}x{lsize}",
                f"five-point finite differences, {lsize}x{lsize} work-groups and tiles",
                functools.partial(finite_diff, lsize),
                fd_reference,
                fd_inputs,
                small=2 * 14 * 16,
                sizes=(1120, 2240, 3360, 4480),  # multiples of both 14 and 16
            )
            for lsize in (16, 18)
        ),
    )
}


def load_program(kernel: str) -> Any:
    """The loopy program a name (built-in) or a ``.py`` kernel file stands for (one
    configuration of a loopy space file: ``loopy_file.load_kernel``)."""
    if kernel in APPLICATIONS:
        return APPLICATIONS[kernel].make()
    path = Path(kernel)
    if path.suffix == ".py" and not path.is_file():
        raise SpecError(f"kernel file {kernel!r} does not exist; give the path of a .py file")
    if path.suffix != ".py":
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
            with contextlib.redirect_stdout(sys.stderr):  # stdout is perfport's (--json)
                made = factory()
        except Exception as exc:  # the user's code: any failure is a bad file, in one line
            raise SpecError(
                f"{path}: make_kernel() raised {type(exc).__name__}: {exc}; fix the file"
            ) from None
    lp = loopy()
    if made is None and callable(getattr(module, "program", None)):
        # "found NoneType" left the user guessing: name what the file is and what counts it
        raise SpecError(
            f"{path} is a loopy space file (it defines program(config)), one kernel per "
            f"configuration: pick one with --config NAME=VALUE ... ('perfport tune {path}' "
            "tunes it)"
        )
    if not isinstance(made, lp.TranslationUnit | lp.LoopKernel):
        raise SpecError(f"{path}: {_not_a_kernel(module, made)}")
    return made


def _not_a_kernel(module: Any, made: Any) -> str:
    """What a kernel file defines instead of a loopy kernel, and what it should define."""
    if hasattr(module, "kernel"):
        found = f"its 'kernel' is {_kind(made)}"
    elif callable(getattr(module, "make_kernel", None)):
        found = f"its make_kernel() returned {_kind(made)}"
    else:
        found = "it defines neither 'kernel' nor 'make_kernel()'"
    return (f"{found}; define 'kernel' (a loopy kernel: kernel = lp.make_kernel(...)) or "
            "'make_kernel()' returning one")  # fmt: skip


def _kind(value: Any) -> str:
    return (
        "nothing (None)" if value is None else f"of type {type(value).__name__}, not a loopy kernel"
    )


def run_on(queue: Any, app: AppKernel, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Run a built-in kernel at size n (of ``app.size``) on an OpenCL queue; (its result,
    numpy's)."""
    inputs = app.inputs(n, np.random.default_rng(seed))
    import pyopencl.array as cla

    program = app.make()
    # Device arrays in, so loopy hands device arrays back (it cannot copy a strided one).
    _, outputs = program(queue, **{k: cla.to_device(queue, v) for k, v in inputs.items()})
    return _to_host(queue, outputs[0]), app.reference(**inputs)


def _to_host(queue: Any, array: Any) -> np.ndarray:
    """A device array on the host, also where its layout is not C-contiguous (the transposed
    DG variant's res), which pyopencl's ``get`` refuses."""
    import pyopencl as cl

    if array.flags.forc:
        return np.asarray(array.get())
    flat = np.empty(array.base_data.size // array.dtype.itemsize, array.dtype)
    cl.enqueue_copy(queue, flat, array.base_data)
    view = np.lib.stride_tricks.as_strided(flat[array.offset // array.dtype.itemsize :],
                                           array.shape, array.strides)  # fmt: skip
    return np.array(view)
