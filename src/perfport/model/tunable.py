"""The application kernels' configuration spaces (``perfport.model.spaces``) as tunable
``KernelSpec``s, and the ranker of model-guided search for them.

loopy writes one program per configuration, so ``loopy_spec`` joins their OpenCL sources in
one ``#if`` chain on a define, ``PERFPORT_LOOPY_CONFIG``, that the spec derives from the
configuration (each configuration compiles only its own program; the parameters' own defines
are prefixed ``PERFPORT_`` so they rename nothing in loopy's code). The NDRange of each
program is loopy's, chosen by the same index. ``perfport tune loopy-fd`` measures them as any
kernel; ``guided_ranker`` counts every configuration of the legal space with loopy and ranks
it with a calibration (``perfport tune loopy-fd --strategy model_guided --calibration``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.args import ArrayArg
from perfport._core.errors import MissingExtra, SpecError
from perfport._core.records import Problem
from perfport._core.spec import KernelSpec, Param
from perfport.kernels import LOOPY_CONFIG_DEFINE, LOOPY_PREFIX
from perfport.model.calibrate import Calibration, Measurement
from perfport.model.gather import local_bytes, loopy
from perfport.model.guided import ModelRanker
from perfport.model.spaces import SearchSpace, config_features, spaces
from perfport.space import Space

SELECTOR = "loopy_config"  # the derived index of the configuration's program
MACRO = LOOPY_CONFIG_DEFINE


def loopy_kernels() -> dict[str, SearchSpace]:
    """The tunable loopy kernels by name: loopy-matmul, loopy-dg, loopy-fd."""
    return {LOOPY_PREFIX + s.name: dataclasses.replace(s, reference=REFERENCES.get(s.name))
            for s in spaces()}  # fmt: skip


def _matmul_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    n = int(p["n"])
    a, b = (inputs[x].astype(np.float64).reshape(n, n) for x in ("a", "b"))
    return {"c": (a @ b).astype(np.float32).reshape(-1)}


def _fd_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    from perfport.model.paper_kernels import fd_reference

    n = int(p["n"])
    return {"res": fd_reference(inputs["u"].reshape(n + 2, n + 2)).reshape(-1)}


def _dg_reference(p: Problem, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """DG's output at the problem's ``layout``: the arrays are the same flat buffers either
    way, and the layout says how the kernel reads u from them and where it writes res."""
    from perfport.model.paper_kernels import DG_LAYOUTS, DG_MATRICES, DG_NODES, dg_reference

    n, layout = int(p["nelements"]), str(p["layout"])
    if layout not in DG_LAYOUTS:
        raise SpecError(f"layout {layout!r}: give one of {', '.join(DG_LAYOUTS)}")
    shape = (DG_MATRICES, DG_NODES, DG_NODES)
    dm = inputs["diff_mat"].astype(np.float64).reshape(shape)
    flat = inputs["u"].astype(np.float64).reshape(-1)
    if layout == "node-fastest":
        return {"res": dg_reference(dm, flat.reshape(n, DG_NODES)).astype(np.float32).ravel()}
    # element-fastest: u[k, j] at k + j * n, res[m, k, i] at (m * 64 + i) * n + k
    res = dg_reference(dm, flat.reshape(DG_NODES, n).T).transpose(0, 2, 1)
    return {"res": res.astype(np.float32).ravel()}


# DG's reference follows the problem's layout (spaces.py): the variant storing u and res
# element-fastest is legal only at layout=element-fastest, the other three at the default.
REFERENCES = {"matmul": _matmul_reference, "dg": _dg_reference, "fd": _fd_reference}


def is_space_file(kernel: str) -> bool:
    """Whether ``kernel`` names a user's loopy space file rather than a built-in name."""
    return kernel.endswith(".py")


def loopy_space(kernel: str) -> SearchSpace:
    """The space a built-in loopy kernel's name (``loopy_kernels()``) or a user's ``.py``
    space file (``perfport.model.loopy_file``) stands for."""
    if is_space_file(kernel):
        from perfport.model.loopy_file import load_space

        return load_space(kernel)
    found = loopy_kernels().get(kernel)
    if found is None:
        raise SpecError(
            f"no loopy kernel {kernel!r}; give one of {', '.join(loopy_kernels())} or a .py "
            "loopy space file"
        )
    return found


@functools.cache
def loopy_spec(kernel: str) -> KernelSpec:
    """The KernelSpec of loopy kernel ``kernel`` (a built-in name, or a ``.py`` space file
    named as the file's ``name`` or stem); loopy writes every configuration's program
    (seconds; cached for the process)."""
    s = loopy_space(kernel)
    if not is_space_file(kernel):
        return joined_spec(s, LOOPY_PREFIX + s.name, f"the loopy {s.name} kernel of the paper")
    return joined_spec(s, s.name, f"the loopy kernel of {Path(kernel).name}", where=kernel)


def joined_spec(s: SearchSpace, name: str, doc: str, where: str = "") -> KernelSpec:
    """The KernelSpec ``name`` of every configuration of ``s``: one loopy program each,
    joined in an ``#if`` chain (module docstring). Errors begin with ``where`` (the file;
    default ``name``)."""
    where = where or name
    configs = s.configs()
    if not configs:
        raise SpecError(f"{where}: its space has no configuration; loosen the constraints")
    parts = [_program_spec(s, config, where) for config in configs]
    local = [(local_bytes(program[program.default_entrypoint.name]),) for _, program in parts]
    specs = [p for p, _ in parts]
    for config, p in zip(configs, specs, strict=True):
        if p.args != specs[0].args:
            raise SpecError(
                f"{where}: the programs of {configs[0]} and {config} take different arguments; "
                "every configuration's program must take the same ones"
            )
    try:
        return _spec(s, name, doc, configs, specs, local)
    except SpecError as exc:  # the file's fits rule, found wanting by KernelSpec
        raise SpecError(f"{where}: {exc}") from None


def _spec(
    s: SearchSpace, name: str, doc: str, configs: list[dict[str, Any]],
    specs: list[KernelSpec], local: list[tuple[str]],
) -> KernelSpec:  # fmt: skip
    source = "\n".join(
        f"#{'if' if i == 0 else 'elif'} {MACRO} == {i}\n{p.source}" for i, p in enumerate(specs)
    )
    args = specs[0].args
    if s.reference is None:
        args = tuple(dataclasses.replace(a, ignore=True) if isinstance(a, ArrayArg) and a.output
                     else a for a in args)  # fmt: skip
    return KernelSpec(
        name=name, source=f"{source}\n#endif\n", entry=specs[0].entry,
        params=tuple(Param(p.name, p.values, define=f"PERFPORT_{p.name.upper()}")
                     for p in s.space.params),
        global_size=_chosen(configs, [p.global_size for p in specs]),
        local_size=_chosen(configs, [p.local_size for p in specs]),
        # Each program's local temporaries, so a device's local-memory limit prunes them.
        local_mem=_chosen(configs, local)[0],
        args=args, problem=Problem.of({**s.sizes, **s.options}), restrictions=(f"{SELECTOR} >= 0", s.fits),
        derived=((SELECTOR, _index(configs)),), defines=((MACRO, SELECTOR),),
        reference=s.reference, tolerance=1e-3 if s.reference else None,
        doc=f"{doc}, one loopy program per configuration (perfport.model.tunable)",
    )  # fmt: skip


def _program_spec(s: SearchSpace, config: dict[str, Any], where: str) -> tuple[KernelSpec, Any]:
    """One configuration's program, preprocessed, and its KernelSpec (entry ``perfport_`` and
    the space's name); what loopy cannot build is a SpecError naming the configuration."""
    lp = loopy()  # first: a missing model extra is its one-line error, not an ImportError
    from loopy.preprocess import infer_unknown_types, preprocess_program

    from perfport.model.measure import kernel_spec

    entry = "perfport_" + re.sub(r"\W", "_", s.name)
    program = s.program(config)
    try:
        if isinstance(program, lp.LoopKernel):
            program = lp.make_program(program)
        program = lp.rename_callable(program, program.default_entrypoint.name, entry)
        # Preprocessed here (code generation would do it anyway) so the local temporaries
        # have their address spaces resolved.
        program = infer_unknown_types(preprocess_program(program), expect_completion=True)
        missing = [a.name for a in program[entry].args
                   if isinstance(a, lp.ValueArg) and a.name not in s.sizes]  # fmt: skip
        if missing:
            raise SpecError(f"{where}: its programs take size {missing[0]}, which has no "
                            f"default; add it to sizes, e.g. {{{missing[0]!r}: 1024}}")  # fmt: skip
        return kernel_spec(program, entry, Problem.of(s.sizes)), program
    except (MissingExtra, SpecError):
        raise
    except Exception as exc:  # loopy and islpy raise bare errors of many kinds
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise SpecError(
            f"{where}: loopy cannot generate code for configuration {config} "
            f"({type(exc).__name__}: {first[:200]}); fix program() or leave the configuration "
            "out with constraints"
        ) from None


def _index(configs: Sequence[Mapping[str, Any]]) -> str:
    """An expression giving each configuration's position in ``configs``; -1 for others."""
    text = "-1"
    for i in reversed(range(len(configs))):
        same = " and ".join(f"{k} == {v!r}" for k, v in configs[i].items())
        text = f"{i} if ({same}) else ({text})"
    return text


def _chosen(configs: Sequence[Any], sizes: Sequence[tuple[Any, ...]]) -> tuple[str, ...]:
    """Per axis, each configuration's size expression chosen by its index (equal expressions
    share one branch)."""
    dims = max(len(s) for s in sizes)
    out = []
    for axis in range(dims):
        by_text: dict[str, list[int]] = {}
        for i, s in enumerate(sizes):
            by_text.setdefault(str(s[axis]) if axis < len(s) else "1", []).append(i)
        text = "1"
        for expr, where in reversed(by_text.items()):
            test = " or ".join(f"{SELECTOR} == {i}" for i in where)
            text = f"({expr}) if ({test}) else ({text})"
        out.append(text)
    return tuple(out)


def base_measurements(
    db: str | Path, fingerprint: str, calibration: Calibration, cache: Any
) -> tuple[list[Measurement], tuple[Any, ...]]:
    """The device's measurement kernels in ``db`` as the calibration's model sees them (the
    base of every refit), and those loopy cannot count (skipped, with the reason)."""
    from perfport.model.dataset import KernelFeatures, from_store

    runs = [r for r in from_store(db, fingerprint) if r.is_collection]
    if not runs:
        return [], ()
    features = KernelFeatures(cache)
    usable, skipped = features.usable(runs)
    return features.measurements(calibration.model, usable), skipped


def guided_ranker(
    s: SearchSpace,
    calibration: Calibration,
    base: Sequence[Measurement],
    problem: Mapping[str, Any],
    space: Space,
    cache: Any,
    uncounted: Callable[[Mapping[str, Any], str], None] | None = None,
    unpredicted: Callable[[Mapping[str, Any], str], None] | None = None,
) -> ModelRanker:
    """The ranker of loopy space ``s`` over ``space`` (its legal configurations, in
    order): each counted by loopy at ``problem`` and predicted by ``calibration``; refits
    calibrate on ``base`` plus the configurations measured (``ModelRanker``). Those loopy
    cannot count (``uncounted`` is told) and those the calibration cannot predict, a term
    dividing by a feature that is 0 for them say (``unpredicted`` is told), rank last."""
    from perfport.model.model import input_features

    configs = [dict(space.config(i)) for i in range(len(space))]
    inputs = functools.partial(input_features, calibration.model, device=calibration.device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        features = config_features(s, configs, problem, inputs, cache, uncounted, unpredicted)
    # A file whose costs are all >= 0 (bounded or not) keeps its refits so: a refit on a few
    # points should not make a physical cost negative.
    return ModelRanker(
        calibration.model, base, features, calibration.device,
        nonnegative=calibration.nonnegative, calibration=calibration,
        unpredicted=(lambda i, why: unpredicted(configs[i], why)) if unpredicted else None,
    )  # fmt: skip
