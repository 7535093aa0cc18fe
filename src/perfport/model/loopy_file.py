"""A user's loopy kernel with a configuration space, from a ``.py`` file, for ``perfport tune
FILE`` with any strategy, ``model_guided`` included (``perfport.model.tunable`` joins its
programs as it joins the built-in loopy kernels'). The file defines:

- ``params`` (required): the parameters, ``{name: values}`` or a list of ``perfport.Param``.
- ``program(config)`` (required): a loopy kernel (``lp.make_kernel``'s LoopKernel or a
  TranslationUnit) for one configuration, a dict of parameter values. Every configuration's
  program takes the same arguments.
- ``constraints``: expressions over the parameters (or functions of the configuration) that
  every legal configuration meets, as ``perfport.space.Space`` takes them.
- ``sizes``: the problem's sizes with their defaults, ``{"n": 1024}``; ``--problem n=2048``
  overrides them. Required for every size the programs take.
- ``fits``: an expression over parameters and sizes a configuration must meet at the problem
  (``"n % tile == 0"``).
- ``reference(problem, inputs) -> outputs``: a numpy reference, as a KernelSpec's; without
  one the output is not verified (tune says so).
- ``name``: the kernel's name in the store (default: the file's stem).

Like ``model stats FILE`` (``apps.load_program``), the file is imported by
``perfport.kernels.loader.import_file``; what is missing or malformed is a one-line SpecError
naming the file, the problem and the fix.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from perfport._core.errors import PerfportError, SpecError
from perfport._core.expr import Expr
from perfport._core.spec import Param, Reference
from perfport.kernels.loader import import_file
from perfport.model.apps import load_program
from perfport.model.gather import loopy
from perfport.model.spaces import SearchSpace
from perfport.space import Space
from perfport.space.space import Constraint

FIELDS = ("params", "program", "constraints", "sizes", "fits", "reference", "name")
SEE = "docs/model.md, 'Your own loopy kernel'"


def load_space(path: str | Path) -> SearchSpace:
    """The configuration space a loopy space file defines (module docstring)."""
    file = Path(path)
    if file.suffix != ".py" or not file.is_file():
        raise SpecError(f"{path}: no such .py file; give a loopy space file ({SEE})")
    module = import_file(file)
    _near_misses(module, path)
    made = getattr(module, "program", None)
    if not callable(made):
        raise SpecError(
            f"{path}: defines no function 'program'; define program(config) returning a loopy "
            f"kernel for one configuration ({SEE})"
        )
    params = _params(getattr(module, "params", None), path)
    sizes = _sizes(getattr(module, "sizes", {}), path)
    constraints = _constraints(getattr(module, "constraints", ()), params, path)
    try:
        space = Space(params, constraints)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    return SearchSpace(
        name=_name(getattr(module, "name", file.stem), path),
        space=space,
        program=_checked(made, path),
        sizes=sizes,
        fits=_fits(getattr(module, "fits", "True"), params, sizes, path),
        reference=_reference(getattr(module, "reference", None), path),
    )


def _near_misses(module: ModuleType, path: str | Path) -> None:
    """A misspelt field (``param``, ``constraint``) would be silently ignored: refuse it."""
    for name in vars(module):
        if name.startswith("_"):  # the file's own helpers
            continue
        close = difflib.get_close_matches(name, FIELDS, n=1, cutoff=0.8)
        if close and name not in FIELDS and not hasattr(module, close[0]):
            raise SpecError(f"{path}: defines {name!r}, which perfport does not read; did you "
                            f"mean {close[0]!r}? (a name of the file's own: start it with "
                            f"'_'; {SEE})")  # fmt: skip


def _params(value: Any, path: str | Path) -> list[Param]:
    if value is None:
        raise SpecError(f"{path}: defines no 'params'; define params = {{name: values}}, e.g. "
                        f"{{'tile': [8, 16, 32]}} ({SEE})")  # fmt: skip
    try:
        if isinstance(value, Mapping):
            params = [Param(str(k), v) for k, v in value.items()]
        elif isinstance(value, Sequence) and all(isinstance(p, Param) for p in value):
            params = list(value)
        else:
            raise SpecError(
                f"must be {{name: values}} or a list of perfport.Param, got {type(value).__name__}"
            )
    except SpecError as exc:
        raise SpecError(f"{path}: params: {exc}") from None
    if not params:
        raise SpecError(f"{path}: params is empty; give at least one parameter ({SEE})")
    return params


def _sizes(value: Any, path: str | Path) -> dict[str, int]:
    ok = isinstance(value, Mapping) and all(
        isinstance(k, str) and k.isidentifier() and isinstance(v, int) and not isinstance(v, bool)
        for k, v in value.items()
    )
    if not ok:
        raise SpecError(f"{path}: sizes must map size names to whole numbers, e.g. "
                        f"{{'n': 1024}}; got {str(value)[:80]}")  # fmt: skip
    return dict(value)


def _constraints(value: Any, params: list[Param], path: str | Path) -> list[Constraint]:
    items = [value] if isinstance(value, str) or callable(value) else value
    if not isinstance(items, Sequence):
        raise SpecError(f"{path}: constraints must be a list of expressions, got "
                        f"{type(value).__name__}")  # fmt: skip
    names = {p.name for p in params}
    out = []
    for item in items:
        try:
            constraint = Constraint.of(item)
        except SpecError as exc:
            raise SpecError(f"{path}: constraints: {exc}") from None
        unknown = sorted(constraint.names - names)
        if unknown:
            raise SpecError(
                f"{path}: constraint {constraint.label!r} names {unknown[0]!r}, not a parameter; "
                "a rule over the problem's sizes belongs in fits"
            )
        out.append(constraint)
    return out


def _fits(value: Any, params: list[Param], sizes: Mapping[str, int], path: str | Path) -> str:
    try:
        unknown = sorted(Expr(value, "fits").names - {p.name for p in params} - set(sizes))
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    if unknown:
        raise SpecError(f"{path}: fits names {unknown[0]!r}, neither a parameter nor a size; "
                        "add it to sizes or params")  # fmt: skip
    return str(value)


def _reference(value: Any, path: str | Path) -> Reference | None:
    if value is not None and not callable(value):
        raise SpecError(f"{path}: reference must be a function reference(problem, inputs) "
                        f"returning the outputs, got {type(value).__name__}")  # fmt: skip
    return value


def _name(value: Any, path: str | Path) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z][\w.-]*", value):
        raise SpecError(f"{path}: name must start with a letter and hold only letters, digits, "
                        f"'_', '.' and '-'; got {value!r}")  # fmt: skip
    return value


def _checked(made: Callable[..., Any], path: str | Path) -> Callable[[dict[str, Any]], Any]:
    """``program`` whose failures (the user's code) and non-loopy results are SpecErrors."""

    def program(config: dict[str, Any]) -> Any:
        try:
            knl = made(dict(config))
        except PerfportError:
            raise
        except Exception as exc:  # the user's code: any failure is a bad file, in one line
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise SpecError(f"{path}: program({config}) raised {type(exc).__name__}: "
                            f"{first[:200]}; fix the file") from None  # fmt: skip
        lp = loopy()
        if not isinstance(knl, lp.TranslationUnit | lp.LoopKernel):
            raise SpecError(f"{path}: program({config}) returned {type(knl).__name__}, not a "
                            "loopy kernel; return lp.make_kernel(...)'s kernel")  # fmt: skip
        return knl

    return program


def load_kernel(
    kernel: str, config: Sequence[str] = (), sizes: Mapping[str, Any] | None = None
) -> Any:
    """``apps.load_program(kernel)``, or with ``config`` (``NAME=VALUE``s, ``--config``) one
    configuration of a loopy space file, refused where the file's ``fits`` excludes it at
    ``sizes`` (``--problem``, over the file's own sizes)."""
    if not config:
        return load_program(kernel)
    path = Path(kernel)
    module = import_file(path) if path.suffix == ".py" and path.is_file() else None
    if (
        module is None
        or not callable(getattr(module, "program", None))
        or hasattr(module, "kernel")
    ):
        raise SpecError(f"--config picks a configuration of a loopy space file (one defining "
                        f"program(config)); {kernel} is not one: drop --config")  # fmt: skip
    return program_at(kernel, config, sizes)


def program_at(
    path: str | Path, assignments: Sequence[str], sizes: Mapping[str, Any] | None = None
) -> Any:
    """The loopy program of one configuration of a space file, chosen by ``NAME=VALUE``
    assignments (``--config`` of ``perfport model stats|predict``), one per parameter; with
    ``sizes``, only where the file's ``fits`` holds at them."""
    space = load_space(path)
    example = " ".join(f"{k}={v}" for k, v in space.space.config(0).items()) if space.space else ""
    config: dict[str, Any] = {}
    for text in assignments:
        name, sep, value = text.partition("=")
        param = next((p for p in space.space.params if p.name == name.strip()), None)
        if not sep or param is None:
            raise SpecError(f"--config {text}: {path} has no parameter {name.strip()!r}; its "
                            f"parameters are {', '.join(space.space.names)}")  # fmt: skip
        # The values as written on the command line: 32 for 32, write for 'write', True for True.
        matches = [v for v in param.values if str(v) == value.strip()]
        if not matches:
            raise SpecError(f"--config {text}: {name} takes {', '.join(map(str, param.values))}")
        if param.name in config:
            raise SpecError(f"--config: {param.name} is given twice; give it once")
        config[param.name] = matches[0]
    missing = [n for n in space.space.names if n not in config]
    if missing:
        raise SpecError(f"{path}: --config needs a value for {', '.join(missing)}; e.g. "
                        f"--config {example}")  # fmt: skip
    if space.space.index(config) is None:
        raise SpecError(f"{path}: --config {' '.join(assignments)} breaks the file's constraints; "
                        f"pick a legal configuration, e.g. --config {example}")  # fmt: skip
    if sizes:  # without --problem the counts stay symbolic: no size to fit
        at = {**space.sizes, **space.options, **sizes}
        if not Expr(space.fits, f"{path}: fits").value({**at, **config}):
            shown = " ".join(f"{k}={v}" for k, v in sizes.items())
            raise SpecError(f"{path}: --config {' '.join(assignments)} does not fit --problem "
                            f"{shown} (fits: {space.fits}); pick another configuration or "
                            "size")  # fmt: skip
    return space.program(config)
