"""Load a KernelSpec from a Python, TOML or YAML file.

A Python file defines ``kernel``: a KernelSpec, or a function returning one. A TOML or YAML
file holds the same fields as data (see docs/kernel-spec.md). Python files (and reference
functions named by data files) are imported as modules under a name derived from their path.
A data file's reference names a .py file beside it, or a module of an explicit allow-list:
never any importable function.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import re
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from perfport._core import (
    ArrayArg,
    KernelSpec,
    LocalArg,
    Param,
    ParamKind,
    PerfportError,
    ScalarArg,
    SpecError,
)
from perfport._core.cache_home import cache_error, dropped
from perfport._core.checking import ReferenceKernel
from perfport._core.optional import missing_extra
from perfport._core.values import evaluate_values

_TOP_KEYS = {
    "name", "entry", "language", "source", "source_file", "params", "global_size",
    "local_size", "args", "problem", "restrictions", "defines", "derived", "local_mem", "default",
    "reference", "tolerance", "doc", "bytes", "flops", "metrics", "verify", "reference_kernel",
}  # fmt: skip
_ARRAY_EXTRAS = {"atol", "rtol", "ignore", "file"}  # issue 26: optional
_ARG_KEYS = {
    "array": {"kind", "name", "dtype", "shape", "init", "output", "constant"} | _ARRAY_EXTRAS,
    "scalar": {"kind", "name", "dtype", "value"},
    "local": {"kind", "name", "dtype", "count"},
}


# Modules import_file made: their names exist in this process only, so what a Dask worker
# gets of them (a Python spec's reference) must travel by value (perfport.tune.cluster).
USER_MODULE_PREFIX = "perfport_user_"


def user_modules() -> list[ModuleType]:
    """The modules ``import_file`` has loaded in this process."""
    return [m for n, m in list(sys.modules.items()) if n.startswith(USER_MODULE_PREFIX)]


def import_file(path: str | Path) -> ModuleType:
    """Import a Python file as a module named after its absolute path (idempotent)."""
    path = Path(path).resolve()
    name = USER_MODULE_PREFIX + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported as Python; give a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        # What the file prints goes to stderr: stdout is perfport's (--json must stay JSON).
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except PerfportError:
        del sys.modules[name]
        raise
    except SyntaxError as exc:
        del sys.modules[name]
        where = f"{path}:{exc.lineno}" if exc.lineno else str(path)  # None: e.g. a NUL byte
        raise SpecError(f"{where}: Python syntax error: {exc.msg}") from None
    except ModuleNotFoundError as exc:
        del sys.modules[name]
        raise missing_extra(exc, str(path)) or SpecError(
            f"{path}: running the file raised ModuleNotFoundError: {exc}; fix the file"
        ) from None
    except (Exception, SystemExit) as exc:  # a spec file that calls exit() is a bad spec too
        del sys.modules[name]
        cache = cache_error(exc)  # importing loopy makes its caches: not the file's fault
        if cache is not None:
            dropped(exc)
            raise SpecError(f"{path}: {cache}") from None
        raise SpecError(
            f"{path}: running the file raised {type(exc).__name__}: {exc}; fix the file"
        ) from None
    return module


def is_loopy_space_file(kernel: str) -> bool:
    """A ``.py`` file that defines ``program(config)`` or ``params`` and no ``kernel``: a
    loopy space file (``perfport.model.loopy_file``). A file that defines ``kernel`` is a
    KernelSpec file, whatever else it names (its source text may well be ``program``)."""
    if not kernel.endswith(".py") or not Path(kernel).is_file():
        return False
    # Imported once: the spec's loading takes it from sys.modules.
    has = vars(import_file(kernel))
    return "kernel" not in has and ("program" in has or "params" in has)


def load_kernel(path: str | Path) -> KernelSpec:
    """Load a kernel spec from a ``.py``, ``.toml``, ``.yaml`` or ``.yml`` file.

    >>> import perfport
    >>> spec = perfport.load_kernel("examples/saxpy.toml")  # doctest: +SKIP
    >>> spec.name  # doctest: +SKIP
    'saxpy'
    """
    path = Path(path)
    if path.is_dir():  # "does not exist" sent the user looking for a file that is there
        raise SpecError(f"kernel spec file {str(path)!r} is a directory; give the spec file in it")
    if not path.is_file():
        raise SpecError(f"kernel spec file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".py":
        return _from_python(path)
    if suffix == ".toml":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # an editor's BOM
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SpecError(f"{path}: invalid TOML ({exc}); fix the syntax") from None
        return _from_data(data, path)
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            reason = str(exc).replace("\n", " ")
            raise SpecError(f"{path}: invalid YAML ({reason}); fix the syntax") from None
        return _from_data(data, path)
    raise SpecError(f"{path}: unknown kernel spec type {suffix!r}; use .py, .toml, .yaml or .yml")


def _from_python(path: Path) -> KernelSpec:
    module = import_file(path)
    kernel = getattr(module, "kernel", None)
    if not hasattr(module, "program"):  # a loopy space file is read above this layer
        # Files 'perfport model stats' counts: calling a loopy kernel would run it.
        if type(kernel).__module__.split(".")[0] == "loopy":
            raise SpecError(
                f"{path} defines a loopy kernel to count ('perfport model stats') and time "
                f"('perfport model measure {path} --sizes n=...'); to tune one, define "
                "program(config) returning each configuration's kernel (docs/model.md)"
            )
        if kernel is None and callable(getattr(module, "make_kernel", None)):
            raise SpecError(
                f"{path} defines make_kernel(), which 'perfport model stats' counts and "
                f"'perfport model measure {path} --sizes n=...' times; to tune, define "
                "'kernel' as a perfport.KernelSpec, or program(config) for loopy"
            )
    if callable(kernel) and not isinstance(kernel, KernelSpec):
        try:
            kernel = kernel()
        except PerfportError:
            raise
        except Exception as exc:
            raise SpecError(f"{path}: kernel() raised {type(exc).__name__}: {exc}") from None
    if not isinstance(kernel, KernelSpec) and callable(getattr(module, "program", None)):
        # built above this layer (perfport.model.loopy_file)
        raise SpecError(
            f"{path} is a loopy space file (it defines program(config)): only 'perfport tune "
            f"{path}' on one device tunes it (pip install 'perfport[model]')"
        )
    if not isinstance(kernel, KernelSpec):
        raise SpecError(
            f"{path}: define 'kernel' as a perfport.KernelSpec (or a function returning one)"
        )
    folder = _folder(path)
    if folder in kernel.include_dirs:
        return kernel
    return dataclasses.replace(kernel, include_dirs=(*kernel.include_dirs, folder))


def _folder(path: Path) -> str:
    """The spec's folder, for its kernels' ``#include "x.h"``: absolute, as every other path
    of the spec is relative to it, not to where perfport runs (nor where it compiles)."""
    return str(path.parent.resolve())


# Kernel Tuner's names for a spec's fields: a spec written from a tune_kernel call.
_KERNEL_TUNER = {
    "kernel_name": "entry",
    "kernel_source": "source or source_file",
    "problem_size": "values in problem, used in global_size",
    "grid_div_x": "folded into global_size, in work-items",
    "grid_div_y": "folded into global_size, in work-items",
    "grid_div_z": "folded into global_size, in work-items",
    "block_size_names": "local_size",
    "tune_params": "params",
    "arguments": "args",
    "answer": "reference",
    "lang": "language",
    "compiler_options": "defines",
    "iterations": "--repeats on the command line",
    "strategy": "--strategy on the command line",
    "cache": "--db on the command line",
}


def _from_data(data: Any, path: Path) -> KernelSpec:
    where = str(path)
    if not isinstance(data, dict):
        raise SpecError(
            f"{where}: the file must hold a table of kernel fields, got {type(data).__name__}"
        )
    unknown = set(data) - _TOP_KEYS
    if unknown:
        ours = [f"{k} is {_KERNEL_TUNER[k]}" for k in sorted(unknown) if k in _KERNEL_TUNER]
        hint = (
            f" ({'; '.join(ours)}: docs/from-kernel-tuner.md has each)"
            if ours
            else f"; allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
        raise SpecError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}{hint}")
    for required in ("name", "entry", "global_size", "local_size"):
        if required not in data:
            raise SpecError(f"{where}: missing required field {required!r}")
    fields = dict(data)
    fields["source"] = _source(fields, path)
    fields.pop("source_file", None)
    fields["include_dirs"] = (_folder(path),)
    fields["params"] = tuple(
        _param(p, where) for p in _list(fields.get("params", []), "params", where)
    )
    fields["args"] = tuple(_arg(a, path) for a in _list(fields.get("args", []), "args", where))
    for key in ("problem", "defines", "derived", "default", "metrics"):
        if key in fields and not isinstance(fields[key], dict):
            raise SpecError(f"{where}: {key!r} must be a table (name = value)")
    _check_problem_numbers(fields.get("problem", {}), where)
    _check_restrictions(fields.get("restrictions", []), where)
    if "reference" in fields:
        fields["reference"] = _reference(fields["reference"], path)
    if "verify" in fields:  # the same rule as a reference: a file beside it, or allowed
        fields["verify"] = _reference(fields["verify"], path, "verify")
    if "reference_kernel" in fields:
        fields["reference_kernel"] = _reference_kernel(fields["reference_kernel"], path)
    if "tolerance" in fields and not isinstance(fields["tolerance"], int | float):
        raise SpecError(f"{where}: 'tolerance' must be a number")
    try:
        return KernelSpec(**fields)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise SpecError(f"{where}: {exc}") from None


def _check_problem_numbers(problem: dict[str, Any], where: str) -> None:
    """A size quoted in a data file is text, and size arithmetic on text fails far from the
    spec ("bad operand type"); a problem value that reads as a number must be one."""
    for name, value in problem.items():
        if isinstance(value, str) and re.fullmatch(
            r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", value
        ):
            raise SpecError(
                f"{where}: problem value {name} is the text {value!r}; write it as a number, "
                f"without quotes: {name} = {value.strip()}"
            )


def _check_restrictions(value: Any, where: str) -> None:
    """A data file's restrictions are expressions; a lambda belongs in a Python spec."""
    for r in value if isinstance(value, list) else [value]:
        if isinstance(r, str) and r.strip().startswith("lambda"):
            raise SpecError(
                f"{where}: restriction {r[:60]!r} is a Python lambda, which TOML and YAML specs "
                "do not run; write it as an expression (e.g. 'bx * tile <= 1024') or move the "
                "spec to a .py file"
            )


def _list(value: Any, key: str, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise SpecError(f"{where}: {key!r} must be a list")
    return value


def _source(fields: dict[str, Any], path: Path) -> str:
    if ("source" in fields) == ("source_file" in fields):
        raise SpecError(
            f"{path}: give exactly one of 'source' (the code) or 'source_file' (a path)"
        )
    if "source" in fields:
        if not isinstance(fields["source"], str):
            raise SpecError(f"{path}: 'source' must be a string")
        return fields["source"]
    source_path = path.parent / str(fields["source_file"])
    try:
        return source_path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise SpecError(
            f"{path}: cannot read source_file {str(source_path)!r} ({exc.strerror})"
        ) from None
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"{path}: source_file {str(source_path)!r} is not UTF-8 text (byte {exc.object[exc.start]:#x} "
            f"at offset {exc.start}); give the kernel's source file, saved as UTF-8"
        ) from None


def _param(p: Any, where: str) -> Param:
    if (
        not isinstance(p, dict)
        or set(p) - {"name", "values", "kind", "define"}
        or "name" not in p
        or "values" not in p
    ):
        raise SpecError(
            f"{where}: each param needs 'name' and 'values' (optionally 'kind', 'define'), got {p!r}"
        )
    try:
        kind = ParamKind(p.get("kind", "compile"))
    except ValueError:
        raise SpecError(
            f"{where}: param {p['name']!r}: kind must be 'compile' or 'launch'"
        ) from None
    values = p["values"]
    if isinstance(
        values, str
    ):  # a Python list expression: "range(1, 9)", "[2**i for i in range(6)]"
        values = evaluate_values(values, f"{where}: param {p['name']} values")
    try:
        return Param(p["name"], values, kind, p.get("define", ""))
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None


def _arg(a: Any, path: Path) -> ArrayArg | ScalarArg | LocalArg:
    where = str(path)
    if not isinstance(a, dict) or a.get("kind") not in _ARG_KEYS:
        raise SpecError(f"{where}: each arg needs kind = 'array', 'scalar' or 'local', got {a!r}")
    kind = a["kind"]
    unknown = set(a) - _ARG_KEYS[kind]
    missing = _ARG_KEYS[kind] - {"init", "output", "constant"} - _ARRAY_EXTRAS - set(a)
    if unknown or missing:
        raise SpecError(
            f"{where}: {kind} arg {a.get('name')!r}: "
            + (
                f"unknown key(s) {sorted(unknown)}"
                if unknown
                else f"missing key(s) {sorted(missing)}"
            )
        )
    fields = {k: v for k, v in a.items() if k != "kind"}
    if "file" in fields:
        fields["data"] = _npy(fields.pop("file"), path, str(a.get("name")))
    try:
        if kind == "array":
            return ArrayArg(**fields)
        if kind == "scalar":
            return ScalarArg(**fields)
        return LocalArg(**fields)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"{where}: {kind} arg {a.get('name')!r}: {exc}") from None
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None


# Modules a TOML/YAML spec may name for its reference besides a file beside it: a data file
# would otherwise make perfport import and call any installed function (``os:system``).
_REFERENCE_MODULES: set[str] = set()


def allow_reference_modules(*modules: str) -> None:
    """Let TOML/YAML specs name ``module:function`` references from these modules (or their
    submodules). The command line adds those of ``PERFPORT_REFERENCE_MODULES``."""
    for module in modules:
        if not all(part.isidentifier() for part in module.split(".")):
            raise SpecError(f"reference module {module!r} is not a dotted module name")
        _REFERENCE_MODULES.add(module)


def _allowed_module(target: str) -> bool:
    return any(target == m or target.startswith(m + ".") for m in _REFERENCE_MODULES)


def _reference(ref: Any, path: Path, key: str = "reference") -> Callable[..., Any]:
    """'file.py:function' (a file in the spec's folder or below it) or 'module:function'
    from an allowed module (``allow_reference_modules``)."""
    if not isinstance(ref, str) or ":" not in ref:
        raise SpecError(
            f"{path}: {key} must be 'file.py:function' or 'module:function', got {ref!r}"
        )
    target, func_name = ref.rsplit(":", 1)
    if target.endswith(".py"):
        module = import_file(_beside(path, target))
    elif _allowed_module(target):
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise SpecError(f"{path}: cannot import reference module {target!r} ({exc})") from None
    else:
        raise SpecError(
            f"{path}: {key} {ref[:80]!r}: module {target[:60]!r} is not allowed; put the "
            "function in a .py file beside the spec ('file.py:function'), or allow the module "
            "with PERFPORT_REFERENCE_MODULES"
        )
    func = getattr(module, func_name, None)
    if not callable(func):
        raise SpecError(f"{path}: {key} {ref!r}: {target} has no function {func_name!r}")
    return func


_REFERENCE_KERNEL_KEYS = {"source", "source_file", "entry", "config", "global_size", "local_size"}


def _reference_kernel(table: Any, path: Path) -> ReferenceKernel:
    """``[reference_kernel]``: source or source_file, entry, and optionally config,
    global_size, local_size."""
    if not isinstance(table, dict) or set(table) - _REFERENCE_KERNEL_KEYS or "entry" not in table:
        raise SpecError(
            f"{path}: reference_kernel must be a table with 'entry' and 'source' or "
            f"'source_file' (optionally {', '.join(sorted(_REFERENCE_KERNEL_KEYS - {'source', 'source_file', 'entry'}))}), got {table!r}"[
                :300
            ]
        )
    fields = dict(table)
    fields["source"] = _source(fields, path)
    fields.pop("source_file", None)
    try:
        return ReferenceKernel(**fields)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None


def _npy(name: Any, path: Path, arg: str) -> np.ndarray:
    """An argument's data from a .npy file named relative to the spec."""
    if not isinstance(name, str) or not name.endswith(".npy"):
        raise SpecError(f"{path}: array arg {arg!r}: file must name a .npy file, got {name!r}")
    file = path.parent / name
    try:
        return np.asarray(np.load(file, allow_pickle=False))
    except FileNotFoundError:
        raise SpecError(
            f"{path}: array arg {arg!r}: file {name!r} does not exist beside the spec "
            f"(looked for {file})"
        ) from None
    except (OSError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:200]
        raise SpecError(
            f"{path}: array arg {arg!r}: {name!r} is not a readable .npy array ({reason})"
        ) from None


def _beside(path: Path, target: str) -> Path:
    """The reference file, which must lie in the spec's folder or below it."""
    folder = path.parent.resolve()
    file = (folder / target).resolve()
    if Path(target).is_absolute() or not file.is_relative_to(folder):
        raise SpecError(
            f"{path}: reference file {target[:80]!r} is outside the spec's folder; name a .py "
            "file beside the spec, relative to it"
        )
    if not file.is_file():
        raise SpecError(f"{path}: reference file {target[:80]!r} does not exist beside the spec")
    return file
