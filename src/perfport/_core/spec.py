"""KernelSpec: everything perfport needs to build, launch, verify and tune one kernel."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from perfport._core import checking
from perfport._core.args import ARG_TYPES, Arg, ArrayArg, LocalArg, ScalarArg, describe_arg
from perfport._core.containers import as_list, as_paths
from perfport._core.dtypes import DTYPE_NAMES, numpy_dtype
from perfport._core.errors import SpecError
from perfport._core.expr import Expr
from perfport._core.identifiers import is_identifier, is_kernel_word, is_printable_name
from perfport._core.metrics import Metrics
from perfport._core.name_refusals import check_type_names, refused_names
from perfport._core.records import Config, Language, Problem, Value, _plain, same_value, value_key
from perfport._core.restrictions import Restriction, as_restrictions, restriction_text
from perfport._core.signature import check_args
from perfport._core.splitting import SplitDim, check_splits


def _check_ident(name: Any, what: str) -> str:
    if not is_identifier(name):
        raise SpecError(f"{what} {name!r} must be an identifier (letters, digits, _)")
    return name


class ParamKind(Enum):
    """COMPILE parameters become ``-D NAME=value`` defines (one build per combination);
    LAUNCH parameters only shape the launch (local size, local memory) and share a build."""

    COMPILE = "compile"
    LAUNCH = "launch"


@dataclass(frozen=True)
class Param:
    """A tunable parameter and the values it may take. A compile-time parameter is the
    ``-D`` macro ``define`` (default: its name), for names the language reserves (OpenCL's
    ``read_only``) or that another tool's records fix."""

    name: str
    values: tuple[Value, ...]
    kind: ParamKind = ParamKind.COMPILE
    define: str = ""

    @property
    def macro(self) -> str:
        return self.define or self.name

    def __post_init__(self) -> None:
        _check_ident(self.name, "parameter name")
        if not isinstance(self.define, str):
            raise SpecError(
                f"parameter {self.name}: define must be a macro name, got {self.define!r}"
            )
        if self.define:
            _check_ident(self.define, f"parameter {self.name}: define")
        if isinstance(self.values, str | bytes) or not isinstance(self.values, Sequence):
            raise SpecError(f"parameter {self.name}: values must be a list, got {self.values!r}")
        values = tuple(_plain(v, f"parameter {self.name}") for v in self.values)
        if not values:
            raise SpecError(f"parameter {self.name}: give at least one value")
        if len({value_key(v) for v in values}) != len(values):
            raise SpecError(f"parameter {self.name}: values repeat in {list(values)}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "kind", ParamKind(self.kind))
        if self.define and self.kind is ParamKind.LAUNCH:
            raise SpecError(f"parameter {self.name}: a launch parameter has no define; drop it")


# reference(problem, inputs by argument name) -> expected outputs by argument name
Reference = Callable[[Problem, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class Geometry:
    """The launch shape of one configuration, in work-items per dimension."""

    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    local_mem_bytes: int  # declared footprint: static expression + LocalArgs


@dataclass(frozen=True)
class KernelSpec:
    """A tunable kernel.

    Sizes and footprints are expressions over the parameters and the problem (see
    ``perfport._core.expr``). ``global_size`` counts work-items (OpenCL NDRange); the CUDA
    backend launches ``global/local`` blocks. ``local_mem`` is the bytes of ``__local`` memory
    the source declares statically; LocalArgs add theirs. ``defines`` adds ``-D`` defines
    computed from the problem. Verification compares output arrays with ``reference`` or, when
    it is None, with the output of the ``default`` configuration; a trial that leaves the
    ``fault_flag`` array nonzero is wrong whatever the comparison says.
    """

    name: str
    source: str
    entry: str
    language: Language = Language.OPENCL
    params: tuple[Param, ...] = ()
    global_size: tuple[str, ...] = ()
    local_size: tuple[str, ...] = ()
    args: tuple[Arg, ...] = ()
    problem: Problem = field(default_factory=Problem)
    # Expressions; a Python spec may also give functions of the configuration (a dict of
    # parameter values -> truthy when legal), as Kernel Tuner takes lambdas.
    restrictions: tuple[Restriction, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    derived: tuple[tuple[str, str], ...] = ()
    local_mem: str = "0"
    default: Config | None = None
    reference: Reference | None = None
    tolerance: float | None = None
    doc: str = ""
    split: tuple[SplitDim, ...] = ()  # how its index space splits across devices (split/)
    # metrics (perfport._core.metrics): work moved and done, and named metric expressions
    bytes: str | None = None
    flops: str | None = None
    metrics: tuple[tuple[str, str], ...] = ()
    # An int output array (zero at start) that the kernel sets nonzero when it detects a fault
    # of its own, e.g. a described stencil reading outside its borders: such a trial is wrong.
    fault_flag: str = ""
    # ---- verification beyond the numpy reference (issue 26; _core/checking.py) ----
    verify: checking.Verify | None = None  # verify(expected, actual) -> bool
    reference_kernel: checking.ReferenceKernel | None = None  # its outputs are the expected ones
    # Folders searched for ``#include "x.h"``, absolute: a spec file's own (kernels/loader.py).
    # Machine-specific, so describe() and the campaign keys leave them out.
    include_dirs: tuple[str, ...] = ()

    if TYPE_CHECKING:  # what __post_init__ takes and converts (the fields are the results)

        def __init__(
            self, name: str, source: str, entry: str, language: Language | str = Language.OPENCL,
            params: Sequence[Param] = (), global_size: str | int | Sequence[str | int] = (),
            local_size: str | int | Sequence[str | int] = (), args: Sequence[Arg] = (),
            problem: Problem | Mapping[str, Any] = ...,
            restrictions: Restriction | Sequence[Restriction] = (),
            defines: Mapping[str, Any] | Sequence[tuple[str, Any]] = (),
            derived: Mapping[str, Any] | Sequence[tuple[str, Any]] = (),
            local_mem: str | int = "0", default: Config | Mapping[str, Any] | None = None,
            reference: Reference | None = None, tolerance: float | None = None, doc: str = "",
            split: Sequence[SplitDim] = (), bytes: str | None = None, flops: str | None = None,
            metrics: Mapping[str, str] | Sequence[tuple[str, str]] = (), fault_flag: str = "",
            verify: checking.Verify | None = None,
            reference_kernel: checking.ReferenceKernel | None = None,
            include_dirs: Sequence[str] = (),
        ) -> None: ...  # fmt: skip

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not is_printable_name(self.name):  # printed in every table
            raise SpecError("kernel spec: 'name' must be 1-200 printable characters")
        if not isinstance(self.source, str) or not self.source.strip():
            raise SpecError(f"kernel {self.name}: 'source' is empty; give the kernel's code")
        _check_ident(self.entry, f"kernel {self.name}: entry point")
        try:
            set_(self, "language", Language(self.language))
        except ValueError:
            raise SpecError(
                f"kernel {self.name}: language {self.language!r} must be one of "
                f"{', '.join(m.value for m in Language)}"
            ) from None
        set_(self, "params", as_list(self.params, f"kernel {self.name}: params", SpecError))
        set_(self, "global_size", _as_exprs(self.global_size))
        set_(self, "local_size", _as_exprs(self.local_size))
        set_(self, "args", as_list(self.args, f"kernel {self.name}: args", SpecError))
        set_(
            self,
            "restrictions",
            as_restrictions(self.restrictions, f"kernel {self.name}: restrictions"),
        )
        defines = self.defines.items() if isinstance(self.defines, Mapping) else self.defines
        set_(self, "defines", tuple((str(k), str(v)) for k, v in defines))
        derived = self.derived.items() if isinstance(self.derived, Mapping) else self.derived
        set_(self, "derived", tuple((str(k), str(v)) for k, v in derived))
        set_(self, "local_mem", str(self.local_mem))
        set_(self, "split", tuple(self.split))
        set_(self, "include_dirs", as_paths(self.include_dirs, f"kernel {self.name}: include_dirs"))
        metrics = self.metrics.items() if isinstance(self.metrics, Mapping) else self.metrics
        set_(self, "metrics", tuple((str(k), str(v)) for k, v in metrics))
        if not isinstance(self.problem, Problem):
            set_(self, "problem", Problem.of(self.problem))
        if self.default is not None and not isinstance(self.default, Config):
            set_(self, "default", Config.of(self.default))
        if self.default is None and not self.params:  # its one configuration
            set_(self, "default", Config.of({}))
        self._validate()

    # ---- validation -------------------------------------------------------------------
    def _check_entry(self, what: str) -> None:
        """An entry point the source never names would fail every configuration's build, one
        by one; a name pasted by the preprocessor (``##``) cannot be checked."""
        if "##" in self.source or re.search(rf"\b{self.entry}\b", self.source):
            return
        declared = re.findall(r"(?:__kernel|\bkernel|__global__)\s+(?:\w+\s+)*?void\s+(\w+)",
                              self.source)  # fmt: skip
        fix = f"set entry to one of {', '.join(declared)}" if declared else "fix entry or source"
        raise SpecError(f"{what}: entry {self.entry!r} does not occur in its source; {fix}")

    def _validate(self) -> None:
        what = f"kernel {self.name}"
        for p in self.params:
            if not isinstance(p, Param):
                raise SpecError(f"{what}: params must be Param records, got {p!r}")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise SpecError(f"{what}: parameter names repeat in {names}")
        clash = set(names) & set(self.problem)
        if clash:
            raise SpecError(f"{what}: {sorted(clash)} are both parameters and problem values")
        check_type_names(what, names, list(self.problem))
        if not 1 <= len(self.global_size) <= 3 or len(self.local_size) != len(self.global_size):
            raise SpecError(
                f"{what}: global_size and local_size need the same number (1-3) of dimensions"
            )
        self._check_entry(what)
        arg_names = [a.name for a in self.args]
        for a in self.args:
            if not isinstance(a, ARG_TYPES):
                raise SpecError(f"{what}: args must be ArrayArg, ScalarArg or LocalArg, got {a!r}")
            _check_ident(a.name, f"{what}: argument name")
        if len(set(arg_names)) != len(arg_names):
            raise SpecError(f"{what}: argument names repeat in {arg_names}")
        if self.reference is not None and not any(
            isinstance(a, ArrayArg) and a.output for a in self.args
        ):
            raise SpecError(f"{what}: a reference needs at least one output array (output=true)")
        self._check_macros(what, arg_names)
        known = set(names) | set(self.problem) | set(DTYPE_NAMES)
        launch = {p.name for p in self.params if p.kind is ParamKind.LAUNCH}
        for name, expr in self.derived_exprs:  # each may use what comes before it
            _check_ident(name, f"{what}: derived value")
            if name in known:
                raise SpecError(
                    f"{what}: derived value {name!r} repeats a parameter or problem name"
                )
            unknown = expr.names - known
            if unknown:
                raise SpecError(
                    f"{what}: derived value {name} {expr.text!r} uses unknown name(s) {', '.join(sorted(unknown))}"
                )
            known.add(name)
            if expr.names & launch:
                launch.add(name)  # a value of launch parameters is only known at launch
        no_launch = known - launch  # what is compiled in cannot depend on launch-only params
        array_names = [a.name for a in self.args if isinstance(a, ArrayArg)]
        for label, expr, allowed in self._expressions(known, no_launch):
            unknown = expr.names - allowed
            if unknown:
                per_config = known - set(self.problem) - set(DTYPE_NAMES)
                of_array = label.startswith("argument ") and label.split()[1] in array_names
                refused = refused_names(label, unknown, set(names), per_config, of_array)
                raise SpecError(f"{what}: {label} {expr.text!r} {refused}")
        self.metric_set.check(known)
        if self.default is not None:
            self.check_config(self.default, f"{what}: default configuration")
        check_splits(what, self.split, len(self.global_size), list(self.problem), array_names)
        checking.check_spec(self)
        check_args(what, self.source, self.entry, self.language, self.args)

    def _check_macros(self, what: str, arg_names: list[str]) -> None:
        """The -D macros (compile-time parameters' and defines) must each be defined once
        and rewrite nothing else of the source."""
        for k, _ in self.defines:
            _check_ident(k, f"{what}: define")
        macros = [p.macro for p in self.params if p.kind is ParamKind.COMPILE]
        macros += [k for k, _ in self.defines]
        if len(set(macros)) != len(macros):
            twice = sorted({m for m in macros if macros.count(m) > 1})
            raise SpecError(
                f"{what}: macro(s) {twice} defined twice (by parameters or defines); rename one"
            )
        for p in self.params:  # a kernel's own defines may name problem values on purpose
            if p.kind is ParamKind.LAUNCH:  # never a macro
                continue
            if p.macro in arg_names or p.macro in self.problem:
                fix = "rename the parameter or give it a define (the macro the source uses)"
                if p.define:
                    fix = "choose another define"
                named = "argument" if p.macro in arg_names else "problem value"
                raise SpecError(
                    f"{what}: parameter {p.name}: its macro {p.macro!r} would rename the "
                    f"{named} {p.macro} in the source; {fix}"
                )
        for m in macros:  # a macro would rewrite these wherever the source says them
            if is_kernel_word(m):
                raise SpecError(
                    f"{what}: macro {m!r} is a word of OpenCL C or CUDA; give the parameter "
                    "another define, e.g. define = '" + m.strip("_").upper() + "'"
                )

    def _expressions(
        self, known: set[str], no_launch: set[str]
    ) -> list[tuple[str, Expr, set[str]]]:
        """(label, expression, the names it may use) for every expression of the spec; an
        array's (label 'argument NAME shape' or 'dtype') may use only the problem's."""
        out: list[tuple[str, Expr, set[str]]] = []
        # Arrays are allocated and seeded once per problem and shared by every configuration
        # (the reference and the default's outputs must compare with each), so their shapes
        # and types see the problem alone; derived values exist there only without params.
        per_problem = set(self.problem) | set(DTYPE_NAMES)
        if not self.params:
            per_problem |= {name for name, _ in self.derived}
        out += [("global_size", e, known) for e in self.global_exprs]
        out += [("local_size", e, known) for e in self.local_exprs]
        out += [("restriction", e, known) for e in self.restriction_exprs]
        out += [("local_mem", self.local_mem_expr, known)]
        out += [(f"define {k}", e, no_launch) for k, e in self.define_exprs]
        for a in self.args:
            if isinstance(a, ArrayArg):
                out.append((f"argument {a.name} dtype", Expr(a.dtype, self.name), per_problem))
                out += [
                    (f"argument {a.name} shape", Expr(s, self.name), per_problem) for s in a.shape
                ]
                continue
            out.append((f"argument {a.name} dtype", Expr(a.dtype, self.name), no_launch))
            if isinstance(a, ScalarArg):
                out.append((f"argument {a.name} value", Expr(a.value, self.name), no_launch))
            else:
                out.append((f"argument {a.name} count", Expr(a.count, self.name), known))
        return out

    def check_config(self, config: Mapping[str, Any], what: str = "configuration") -> None:
        """Raise SpecError unless ``config`` gives every parameter one of its values."""
        names = {p.name for p in self.params}
        if set(config) != names:
            raise SpecError(
                f"{what} {dict(config)} must set exactly the parameters {sorted(names)}"
            )
        for p in self.params:
            if not any(same_value(config[p.name], v) for v in p.values):
                raise SpecError(
                    f"{what}: {p.name}={config[p.name]!r} is not one of {list(p.values)}"
                )

    # ---- parsed expressions (cached; Expr pickles by text) ----------------------------
    @cached_property
    def global_exprs(self) -> tuple[Expr, ...]:
        return tuple(Expr(e, f"kernel {self.name} global_size") for e in self.global_size)

    @cached_property
    def local_exprs(self) -> tuple[Expr, ...]:
        return tuple(Expr(e, f"kernel {self.name} local_size") for e in self.local_size)

    @cached_property
    def restriction_exprs(self) -> tuple[Expr, ...]:
        return tuple(
            Expr(e, f"kernel {self.name} restriction")
            for e in self.restrictions
            if isinstance(e, str)
        )

    @cached_property
    def derived_exprs(self) -> tuple[tuple[str, Expr], ...]:
        return tuple((k, Expr(v, f"kernel {self.name} derived {k}")) for k, v in self.derived)

    @cached_property
    def local_mem_expr(self) -> Expr:
        return Expr(self.local_mem, f"kernel {self.name} local_mem")

    @cached_property
    def metric_set(self) -> Metrics:
        return Metrics.of(self.name, self.bytes, self.flops, self.metrics)

    @cached_property
    def define_exprs(self) -> tuple[tuple[str, Expr], ...]:
        return tuple((k, Expr(v, f"kernel {self.name} define {k}")) for k, v in self.defines)

    # ---- derived values ---------------------------------------------------------------
    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @cached_property
    def source_hash(self) -> str:
        """Identity of the code: language, entry point and source text."""
        text = f"{self.language.value}\0{self.entry}\0{self.source}"
        return hashlib.sha256(text.encode()).hexdigest()

    @cached_property
    def launch_hash(self) -> str:
        """Identity of how a configuration runs: the code, its sizes, arguments and defines.
        A crash remembered under another one (an argument's dtype since fixed) is not this
        kernel's to reuse."""
        launch = [self.source_hash, list(self.global_size), list(self.local_size),
                  [describe_arg(a) for a in self.args], dict(self.defines), dict(self.derived),
                  self.local_mem]  # fmt: skip
        text = json.dumps(launch, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def env(self, config: Mapping[str, Any], problem: Mapping[str, Any]) -> dict[str, Any]:
        """The names expressions see: the problem's defaults, the problem, the configuration
        and the derived values (when the configuration is complete)."""
        env = {**dict(self.problem), **dict(problem), **dict(config)}
        if all(p.name in env for p in self.params):
            for name, expr in self.derived_exprs:
                env[name] = expr.value(env)
        return env

    def geometry(self, env: Mapping[str, Any]) -> Geometry:
        global_size = tuple(int(e.value(env)) for e in self.global_exprs)
        local_size = tuple(int(e.value(env)) for e in self.local_exprs)
        return Geometry(global_size, local_size, self.local_mem_bytes(env))

    def local_mem_bytes(self, env: Mapping[str, Any]) -> int:
        """The declared footprint: static ``local_mem`` plus every local buffer argument."""
        return int(self.local_mem_expr.value(env)) + sum(self.local_arg_bytes(env).values())

    def local_arg_bytes(self, env: Mapping[str, Any]) -> dict[str, int]:
        """Bytes of each local buffer argument."""
        return {
            a.name: int(Expr(a.count, f"argument {a.name} count").value(env))
            * numpy_dtype(Expr(a.dtype, self.name).value(env)).itemsize
            for a in self.args
            if isinstance(a, LocalArg)
        }

    def build_defines(self, env: Mapping[str, Any]) -> dict[str, str]:
        """``-D`` defines: every compile-time parameter, then the spec's own defines."""
        out = {
            p.macro: _define_text(env[p.name]) for p in self.params if p.kind is ParamKind.COMPILE
        }
        for k, e in self.define_exprs:
            out[k] = _define_text(e.value(env))
        return out

    def describe(self) -> dict[str, Any]:
        """Everything but the source as plain data (stored with results, shown by the CLI)."""
        ref = self.reference
        return (
            {
                "name": self.name,
                "language": self.language.value,
                "entry": self.entry,
                "params": [
                    {"name": p.name, "values": list(p.values), "kind": p.kind.value}
                    | ({"define": p.define} if p.define else {})
                    for p in self.params
                ],
                "global_size": list(self.global_size),
                "local_size": list(self.local_size),
                "args": [describe_arg(a) for a in self.args],
                "problem": dict(self.problem),
                "restrictions": [restriction_text(r) for r in self.restrictions],
                "defines": dict(self.defines),
                "derived": dict(self.derived),
                "local_mem": self.local_mem,
                "default": dict(self.default) if self.default is not None else None,
                "reference": None if ref is None else checking.callable_name(ref),
                "tolerance": self.tolerance,
                "doc": self.doc,
            }
            | _describe_metrics(self)
            | checking.describe_checks(self)
        )

    def __getstate__(self) -> dict[str, Any]:
        # Drop cached parsed expressions; they are rebuilt on first use. Restriction functions
        # stay in the process that loaded the spec, where spaces are enumerated: a lambda does
        # not pickle, and the worker processes only build and run configurations.
        state = {f: getattr(self, f) for f in self.__dataclass_fields__}
        state["restrictions"] = tuple(r for r in self.restrictions if isinstance(r, str))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)


def _describe_metrics(spec: KernelSpec) -> dict[str, Any]:
    # Only what is declared: an unchanged description keeps older campaigns' keys.
    work = {k: v for k, v in (("bytes", spec.bytes), ("flops", spec.flops)) if v is not None}
    return work | ({"metrics": dict(spec.metrics)} if spec.metrics else {})


def _as_exprs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str | int):
        return (str(value),)
    return tuple(str(v) for v in value)


def _define_text(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)
