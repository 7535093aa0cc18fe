"""Run a bundle: for each new problem, choose the shipped configuration and launch it.

This is the library side of Lawson's scheme in Python: a bundle names the kernel and the k
configurations shipped for it; ``Dispatcher`` builds each configuration the first time a
problem needs it and keeps the build, so a process compiles at most the k shipped kernels
(times the variants the problem itself compiles in, e.g. matmul's transposes and element type)
and never anything else.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import (
    ArrayArg,
    BuildError,
    Config,
    DeviceInfo,
    Expr,
    KernelSpec,
    LaunchError,
    LocalArg,
    Problem,
    ScalarArg,
    SpecError,
)
from perfport._core.dtypes import numpy_dtype
from perfport._core.errors import first_line
from perfport.devices import (
    CompiledKernel,
    ConstantData,
    LocalSpace,
    Session,
    get_device,
    open_session,
)
from perfport.kernels import resolve_kernel
from perfport.measure.data import scalar_value
from perfport.select.bundle import RULES_FROM, SPEC_FILE, Bundle, load_bundle
from perfport.select.errors import SelectError
from perfport.select.legality import LegalChoice, Legality, legal_choice
from perfport.select.problem_values import typed_values
from perfport.tune.checks import resolve_problem

Defines = tuple[tuple[str, str], ...]
# ("build", defines) or ("launch", defines, local size): both may depend on the problem.
RefusalKey = tuple[Any, ...]
_MAX_CHOICES = 4096  # problems whose choice (and refusals) a Dispatcher remembers


@dataclass(frozen=True)
class Refusal:
    """A configuration this device refused: ``what`` failed ("build" or "launch") and the
    driver's first line about it."""

    config: Config
    what: str
    reason: str


class Dispatcher:
    """Chooses and launches a bundle's configurations of its kernel on one device.

    ``device`` is a DeviceInfo, a device id, or None for the default device; ``spec``
    overrides the kernel named in the bundle (a built-in name, a spec file, or a KernelSpec);
    a bundle of a kernel of your own needs it (or the spec file that ``select fit --spec``
    recorded, where it still loads). The session opens on the first ``run``. Not thread-safe (one device queue): use one
    dispatcher per thread, and ``close`` it (or use it as a context manager). A configuration
    the device refuses (build or launch) is remembered for the dispatcher's life, across
    ``close``: the device refuses it again.
    """

    def __init__(
        self,
        bundle_dir: str | Path,
        device: DeviceInfo | str | None = None,
        spec: KernelSpec | str | Path | None = None,
    ) -> None:
        self.bundle: Bundle = load_bundle(bundle_dir)
        self.spec = bundle_spec(self.bundle, spec)
        self.device = (
            device if isinstance(device, DeviceInfo) else get_device(device, self.spec.language)
        )
        self._session: Session | None = None
        self._builds: dict[Defines, CompiledKernel] = {}
        self._legality = Legality(self.spec, self.device)
        self._choices: dict[str, LegalChoice] = {}  # by problem: a serving loop repeats shapes
        self._refused: dict[RefusalKey, Refusal] = {}  # never built or launched again
        self._warned: set[RefusalKey] = set()

    # ---- choosing -----------------------------------------------------------------------
    def choose(self, problem: Mapping[str, Any]) -> Config:
        """The configuration ``run`` launches for ``problem`` (the kernel's defaults fill in
        the problem values it leaves out): the selector's pick where it is legal there, else
        the shipped configuration that ``choice`` falls back to. Legality is checked
        statically: ``run`` may fall back further where the device refuses this
        configuration's build or launch."""
        return self.bundle.configs[self.choice(problem).index]

    def choice(self, problem: Mapping[str, Any]) -> LegalChoice:
        """The selector's pick for ``problem``, whether the kernel's restrictions and this
        device's launch limits allow it there, and the shipped configuration launched
        instead where they do not (the bundle's best by training performance that is
        legal); a SelectError when no shipped configuration is legal at ``problem``. Only the
        static rules count here: ``run`` may fall back further, in the same order, where the
        device refuses a build or a launch."""
        full = self._resolved(problem)
        if full.key not in self._choices:
            if len(self._choices) >= _MAX_CHOICES:
                self._choices.clear()
            given = {name: full[name] for name in problem}  # typed: as 'select predict' notes it
            for note in self.bundle.off_fitted(given):
                if ("fitted", note) not in self._warned:
                    self._warned.add(("fitted", note))
                    warnings.warn(note, RuntimeWarning, stacklevel=2)
            try:
                choice = legal_choice(self.bundle, self._legality, full)
                # What run would refuse (an array of M=-4096 rows) is refused here too.
                self._array_sizes(self.spec.env(self.bundle.configs[choice.index], full))
            except SpecError as exc:
                raise SelectError(str(exc)) from None
            self._choices[full.key] = choice
        return self._choices[full.key]

    @property
    def builds(self) -> int:
        """How many programs this dispatcher has compiled so far."""
        return len(self._builds)

    # ---- running ------------------------------------------------------------------------
    def run(
        self, problem: Mapping[str, Any], inputs: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """Launch the chosen configuration once on ``inputs`` (array arguments by name, any
        shape with the right number of elements, converted to the kernel's element type;
        outputs left out start as zeros) and return every output array, flat.

        Where the device refuses the chosen configuration (its build fails, or the driver
        refuses the launch and the context stays usable), ``run`` launches the next one in
        ``preference_order`` that is legal at ``problem`` and not refused, warns once per
        refusal (RuntimeWarning) and remembers it, so it is not built or launched again; a
        SelectError when every shipped configuration is refused or illegal there."""
        full = self._resolved(problem)
        excluded: dict[int, str] = {}  # configurations the device refused at this problem
        met: list[RefusalKey] = []
        while True:
            index = self._run_choice(full, excluded)
            config = self.bundle.configs[index]
            env = self.spec.env(config, full)
            hosts = self._host_arrays(env, inputs)  # checked before anything is built
            done = self._attempt(config, env, hosts)
            if isinstance(done, dict):
                self._warn(met, config)
                return done
            met.append(done)
            excluded[index] = self._refused[done].reason

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        self._builds.clear()  # programs belong to the session's context

    def __enter__(self) -> Dispatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- helpers ------------------------------------------------------------------------
    def _open(self) -> Session:
        if self._session is None:
            self._session = open_session(self.device)
        return self._session

    def _resolved(self, problem: Mapping[str, Any]) -> Problem:
        """``problem`` over the kernel's defaults, checked as ``run`` and the CLI check it: a
        misspelt name (MM) or M=64.5 for an integer size is refused, not answered for; 0/1 for
        a flag and 512.0 for a size are taken, as ``select predict`` takes them."""
        try:
            return resolve_problem(self.spec, typed_values(self.spec, problem))
        except SpecError as exc:
            raise SelectError(str(exc)) from None

    def _run_choice(self, full: Mapping[str, Any], excluded: Mapping[int, str]) -> int:
        if not excluded:
            return self.choice(full).index  # remembered by problem
        try:
            return legal_choice(self.bundle, self._legality, full, excluded).index
        except SpecError as exc:
            raise SelectError(str(exc)) from None

    def _attempt(
        self, config: Config, env: Mapping[str, Any], hosts: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray] | RefusalKey:
        """Build and launch ``config``: its outputs, or the key of the device's refusal."""
        spec = self.spec
        geometry = spec.geometry(env)
        defines: Defines = tuple(spec.build_defines(env).items())
        build_key: RefusalKey = ("build", defines)
        launch_key: RefusalKey = ("launch", defines, tuple(geometry.local_size))
        for key in (build_key, launch_key):
            if key in self._refused:
                return key
        try:
            kernel = self._kernel(defines)
        except BuildError as exc:
            return self._refuse(build_key, config, "build", exc)
        session = self._open()
        buffers = {name: session.upload(array) for name, array in hosts.items()}
        try:
            session.launch(
                kernel, geometry.global_size, geometry.local_size, self._args(env, buffers)
            )
        except LaunchError as exc:
            if not session.healthy:  # the context is lost: no other configuration can run
                raise SelectError(
                    f"{self.device.id} refused configuration {config} of {spec.name}: {exc}; "
                    "fit the bundle on this device"
                ) from None
            return self._refuse(launch_key, config, "launch", exc)
        outputs = {}
        for a in spec.args:
            if isinstance(a, ArrayArg) and a.output:
                out = np.empty_like(hosts[a.name])
                session.download(buffers[a.name], out)
                outputs[a.name] = out
        return outputs

    def _args(self, env: Mapping[str, Any], buffers: Mapping[str, Any]) -> list[Any]:
        spec = self.spec
        dynamic = spec.local_arg_bytes(env)
        args: list[Any] = []
        for a in spec.args:
            if isinstance(a, ArrayArg):
                args.append(
                    ConstantData(a.name, buffers[a.name]) if a.constant else buffers[a.name]
                )
            elif isinstance(a, ScalarArg):
                args.append(scalar_value(spec, a, env))
            else:
                assert isinstance(a, LocalArg)
                args.append(LocalSpace(dynamic[a.name]))
        return args

    def _refuse(self, key: RefusalKey, config: Config, what: str, exc: Exception) -> RefusalKey:
        if len(self._refused) >= _MAX_CHOICES:
            self._refused.clear()
            self._warned.clear()
        self._refused[key] = Refusal(config, what, first_line(exc))
        return key

    def _warn(self, met: list[RefusalKey], launched: Config) -> None:
        # A silent fallback would hide a deployment problem: say so once per refusal.
        for key in met:
            if key in self._warned:
                continue
            self._warned.add(key)
            r = self._refused[key]
            warnings.warn(
                f"{self.device.id} refused to {r.what} configuration {r.config} of "
                f"{self.spec.name} ({r.reason}); launched configuration {launched} instead",
                RuntimeWarning,
                stacklevel=3,
            )

    def _kernel(self, defines: Defines) -> CompiledKernel:
        # Keyed by the -D defines, as TrialEngine does: launch-time parameters (work-group
        # sizes) share one build. A BuildError is the caller's to record.
        if defines not in self._builds:
            spec = self.spec
            self._builds[defines] = self._open().compile(
                spec.source, spec.language, spec.entry, dict(defines), spec.include_dirs
            )
        return self._builds[defines]

    def _array_sizes(self, env: Mapping[str, Any]) -> list[tuple[ArrayArg, np.dtype, int]]:
        return array_sizes(self.spec, env)

    def _host_arrays(
        self, env: Mapping[str, Any], inputs: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        spec = self.spec
        unknown = set(inputs) - {a.name for a in spec.args if isinstance(a, ArrayArg)}
        if unknown:
            raise SelectError(
                f"{spec.name} has no array argument(s) {', '.join(sorted(unknown))}; "
                "pass inputs by argument name"
            )
        out = {}
        for a, dtype, size in self._array_sizes(env):
            if a.name not in inputs:
                if not a.output:
                    raise SelectError(f"{spec.name} needs input array {a.name!r}; pass it")
                out[a.name] = np.zeros(size, dtype)
                continue
            array = np.ascontiguousarray(inputs[a.name], dtype=dtype).reshape(-1)
            if array.size != size:
                raise SelectError(f"{a.name} has {array.size} elements; this problem needs {size}")
            out[a.name] = array
        return out


def array_sizes(spec: KernelSpec, env: Mapping[str, Any]) -> list[tuple[ArrayArg, np.dtype, int]]:
    """Each array argument's element type and size at ``env``; a SelectError where one would
    have no elements."""
    out = []
    for a in spec.args:
        if not isinstance(a, ArrayArg):
            continue
        dtype = numpy_dtype(Expr(a.dtype, spec.name).value(env))
        size = math.prod(int(Expr(s, f"argument {a.name}").value(env)) for s in a.shape)
        if size < 1:  # a device buffer of 0 or fewer elements fails deep in the driver
            raise SelectError(f"at this problem {a.name} would have {size} elements; give "
                              "sizes that leave every array at least one")  # fmt: skip
        out.append((a, dtype, size))
    return out


def bundle_spec(bundle: Bundle, spec: KernelSpec | str | Path | None = None) -> KernelSpec:
    """The kernel a bundle's configurations launch: ``spec`` where given, else the TOML or
    YAML spec file recorded at fit time (a hint: used only where it still loads a kernel of the
    bundle's name), else the built-in the bundle names, unless its fit found the data's kernel
    is not that built-in (``metadata.rules_from``: none (...)). Its configurations are checked
    against it."""
    where = f"(bundle {bundle.path})"
    if spec is None:
        spec = _recorded_spec(bundle)
    rules_from = str(bundle.metadata.get(RULES_FROM, ""))
    if spec is None and rules_from.startswith("none ("):  # the fit knew it is no built-in
        raise SelectError(
            f"the bundle's kernel is not the built-in {bundle.kernel}: {rules_from[6:-1]} "
            f"{where}; give the kernel's spec file: Dispatcher({str(bundle.path)!r}, "
            "spec='FILE.toml'), or --spec FILE.toml"
        )
    try:
        resolved = resolve_kernel(spec if spec is not None else bundle.kernel)
    except SpecError as exc:
        if spec is not None:
            raise SelectError(f"{exc} {where}; fit the bundle for this kernel") from None
        raise SelectError(
            f"{exc} {where}; give the kernel's spec file: Dispatcher({str(bundle.path)!r}, "
            "spec='FILE.toml'), or --spec FILE.toml"
        ) from None
    try:
        for i, config in enumerate(bundle.configs):
            resolved.check_config(config, f"bundle configuration {i}")
    except SpecError as exc:
        raise SelectError(f"{exc} {where}; fit the bundle for this kernel") from None
    return resolved


def _recorded_spec(bundle: Bundle) -> KernelSpec | None:
    hint = bundle.metadata.get(SPEC_FILE)
    # Only data files: a bundle may come from elsewhere, and a .py spec would run its code.
    if not isinstance(hint, str) or Path(hint).suffix.lower() not in (".toml", ".yaml", ".yml"):
        return None
    if not Path(hint).is_file():
        return None
    try:
        recorded = resolve_kernel(hint)
    except SpecError:
        return None  # moved or changed since: the caller's spec, or the built-in, decides
    return recorded if recorded.name == bundle.kernel else None
