"""The space of one kernel on one device: its restrictions, then every known device limit.

Device limits (erdem2018 Eqs. 1-2, and the local memory PoCL does not police):
- the product of the local sizes <= the device's max work-group size;
- each local size <= the device's max work-item size in that dimension;
- each global size is a multiple of its local size (OpenCL 1.2 has no ragged work-groups);
- the kernel's local-memory footprint <= the device's local memory.
The per-kernel limit CL_KERNEL_WORK_GROUP_SIZE is known only after a build; the runner checks
it before launching.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perfport._core import (
    Config,
    DeviceInfo,
    Expr,
    ExpressionError,
    KernelSpec,
    LocalArg,
    Param,
    Problem,
    SpecError,
)
from perfport._core.expr import parse
from perfport._core.launch import check_launch
from perfport._core.problem_check import resolve_problem
from perfport.space.space import Constraint, ConstraintSource, PruningReport, Space

DEVICE = ConstraintSource.DEVICE
DIVISIBLE = "(global divisible by local)"  # the label's tail of that rule, which the hint finds


def _is_one(text: str) -> bool:
    return text.strip() in ("1", "1.0")


def _pads(global_size: str, local_size: str) -> bool:
    """Whether the whole global size is one round_up(x, local): a multiple by construction.
    Parsed: 'round_up(h, 8) + round_up(n, bx)' starts and ends alike but need not divide by
    bx. Only spellings the text match exempted before ('round_up(n, (bx))' kept the rule,
    redundant but true) are exempt, since the rules are part of campaign keys."""
    compact, lo = global_size.replace(" ", ""), local_size.replace(" ", "")
    if not (compact.startswith("round_up(") and compact.endswith(f",{lo})")):
        return False
    try:
        body = parse(str(global_size), "global size").body
        local = parse(str(local_size), "local size").body
    except ExpressionError:  # left to the constraint, whose error names the expression
        return False
    return (
        isinstance(body, ast.Call)
        and isinstance(body.func, ast.Name)
        and body.func.id == "round_up"
        and len(body.args) == 2
        and not body.keywords
        and ast.dump(body.args[1]) == ast.dump(local)
    )


def divisible_sizes(global_size: Sequence[str], local_size: Sequence[str]) -> list[tuple[str, str]]:
    """The (global, local) size expressions whose division is a launch rule on every device
    (OpenCL 1.2 has no ragged work-groups): all but a local size of 1 and a global size that
    is round_up(x, local) as a whole, a multiple by construction."""
    return [
        (g, lo)
        for g, lo in zip(global_size, local_size, strict=False)
        if not _is_one(lo) and not _pads(g, lo)
    ]


def device_constraints(
    device: DeviceInfo,
    local_size: Sequence[str],
    global_size: Sequence[str] = (),
    footprint: Sequence[str] = (),
) -> list[Constraint]:
    """Constraints for a launch shape (expressions per dimension) and local-memory footprint
    (expressions in bytes, summed) on ``device``."""
    out: list[Constraint] = []
    local = [t for t in local_size if not _is_one(t)]
    if local:
        product = " * ".join(f"({t})" if not t.isidentifier() else t for t in local)
        limit = device.max_work_group_size
        out.append(
            Constraint.of(
                f"{product} <= {limit}", DEVICE, f"{product} <= {limit} (max work-group size)"
            )
        )
    for dim, text in enumerate(local_size):
        if _is_one(text) or dim >= len(device.max_work_item_sizes):
            continue
        limit = device.max_work_item_sizes[dim]
        if limit < device.max_work_group_size:
            out.append(
                Constraint.of(
                    f"({text}) <= {limit}", DEVICE, f"{text} <= {limit} (max work-item size)"
                )
            )
    for g, lo in divisible_sizes(global_size, local_size):
        # The label is part of every campaign's key: bracketing compound sizes here (it
        # reads 'M // WPT % TS // WPT') would keep their campaigns from resuming.
        label = f"{g} % {lo} == 0 {DIVISIBLE}"
        out.append(Constraint.of(f"({g}) % ({lo}) == 0", DEVICE, label))
    terms = [t for t in footprint if t.strip() != "0"]
    if terms:
        total = " + ".join(terms)
        limit = device.local_mem_bytes
        # Each term parenthesised: a term "a if c else b" would otherwise take the sum and the
        # comparison into its else branch, and a configuration with no local memory (0) read
        # as over the limit.
        summed = " + ".join(t if t.strip().isidentifier() else f"({t})" for t in terms)
        out.append(
            Constraint.of(
                f"{summed} <= {limit}", DEVICE, f"{total} <= {limit} (local memory bytes)"
            )
        )
    return out


def spec_device_constraints(
    spec: KernelSpec, device: DeviceInfo, min_work_groups: bool = False
) -> list[Constraint]:
    """The device's limits for this kernel's launch shape and footprint; with
    ``min_work_groups``, also erdem2018's soft rule (Eq. 3): at least one work-group per
    compute unit, so no unit idles."""
    footprint = [spec.local_mem] + [
        f"({a.count}) * sizeof({a.dtype})" for a in spec.args if isinstance(a, LocalArg)
    ]
    out = device_constraints(device, spec.local_size, spec.global_size, footprint)
    if min_work_groups and device.compute_units > 0:
        groups = " * ".join(
            f"ceil_div({g}, {lo})" for g, lo in zip(spec.global_size, spec.local_size, strict=True)
        )
        label = f"{groups} >= {device.compute_units} (soft rule: work-groups >= compute units)"
        out.append(Constraint.of(f"{groups} >= {device.compute_units}", DEVICE, label))
    return out


def _check_local_values(spec: KernelSpec) -> None:
    """A parameter that is a local size with a value below 1 would fail as a divisor in the
    device's constraints, in a message about a rule the user never wrote."""
    values = {p.name: p.values for p in spec.params}
    for size in (str(s).strip() for s in spec.local_size):
        bad = [v for v in values.get(size, ()) if isinstance(v, int | float) and v < 1]
        if bad:
            raise SpecError(
                f"kernel {spec.name}: parameter {size} is a local size, so each of its values "
                f"must be at least 1, not {bad[0]!r}; leave {bad[0]!r} out of its values"
            )


def _check_local_exprs(spec: KernelSpec, constants: Mapping[str, Any]) -> None:
    """A local size written as an expression ('bx // 2') below 1 for a configuration the
    kernel's restrictions allow: refused as a parameter's values below 1 are, where the
    device's rules failed on it as a divisor, in a rule the user never wrote."""
    params = {p.name for p in spec.params}
    for text in (str(s).strip() for s in spec.local_size):
        if _is_one(text) or text in params:  # parameters: _check_local_values
            continue
        expr = Expr(text, f"kernel {spec.name} local_size")
        if _at_least_one(expr, spec, constants):
            continue
        below = Constraint(f"{text} < 1", Expr(f"({text}) < 1", expr.what))
        restrictions = [Constraint.of(r) for r in spec.restrictions]
        space = Space(spec.params, [*restrictions, below], constants, spec.derived_exprs)
        if len(space):
            config = dict(space.config(0))
            env = spec.env(config, constants)
            shown = ", ".join(f"{n}={env[n]!r}" for n in sorted(expr.names) if n in env)
            raise SpecError(
                f"kernel {spec.name}: local size {text!r} is {expr.value(env)!r} for "
                f"{shown or 'every configuration'}, "
                f"and a local size must be at least 1; add the restriction '{text} >= 1' or "
                "leave such values out"
            )


def _at_least_one(expr: Expr, spec: KernelSpec, constants: Mapping[str, Any]) -> bool:
    """Whether ``expr`` is at least 1 on every combination of the parameters it reads (on
    an open grid, so cheap), which spares enumerating the kernel's space; False when it
    cannot tell (it reads a derived value, or fails somewhere)."""
    values = {p.name: p.values for p in spec.params if p.name in expr.names}
    if not expr.names <= set(values) | set(constants):
        return False
    env: dict[str, Any] = dict(constants)
    for axis, name in enumerate(values):
        shape = [1] * len(values)
        shape[axis] = -1
        env[name] = np.asarray(values[name], dtype=object).reshape(shape)
    try:
        return bool(np.all(np.asarray(expr.vector(env, strict=True)) >= 1))
    except (ArithmeticError, ExpressionError, TypeError, ValueError):
        return False


def empty_space_hint(report: PruningReport) -> str:
    """Advice for a space that the device leaves empty because no global size divides by its
    local size: the usual cause is a global size written in work-groups (Kernel Tuner's grid,
    CUDA's gridDim) where OpenCL, and perfport, count work-items. "" when that is not why."""
    if report.legal or not any(DIVISIBLE in label and n for label, n, _ in report.removed_by):
        return ""
    return (
        "global_size counts work-items, not work-groups (OpenCL's NDRange; CUDA's grid is "
        "global / local): write n, or round_up(n, bx) to pad n items to whole groups of bx, "
        "not ceil_div(n, bx)"
    )


def kernel_space(
    spec: KernelSpec,
    problem: Problem | Mapping[str, Any] | None = None,
    device: DeviceInfo | None = None,
    min_work_groups: bool = False,
) -> Space:
    """The legal configurations of ``spec`` for ``problem`` on ``device`` (no device: only the
    kernel's own restrictions). A problem at which the kernel cannot launch (sizes below 1,
    arrays beyond the device's memory) is a SpecError here, before anything runs or is stored."""
    if not isinstance(spec, KernelSpec):  # a name gave an AttributeError from inside
        raise SpecError(
            f"kernel_space takes a KernelSpec, not {type(spec).__name__} {str(spec)[:40]!r}; "
            "perfport.builtin(NAME) or perfport.load_kernel(FILE) gives one"
        )
    if device is not None and not isinstance(device, DeviceInfo):
        raise SpecError(
            f"kernel_space takes a DeviceInfo, not {type(device).__name__} {str(device)[:40]!r}; "
            "perfport.devices.get_device(ID) gives one"
        )
    _check_local_values(spec)
    # Checked as tune checks it: a misspelt name would leave the default in place, and a
    # size given as '4096' empty the space, blamed on a rule it never broke.
    problem = resolve_problem(spec, problem)
    constants = spec.env({}, problem)
    _check_local_exprs(spec, constants)
    constraints = [Constraint.of(r) for r in spec.restrictions]
    if device is not None:
        constraints += spec_device_constraints(spec, device, min_work_groups)
    space = Space(spec.params, constraints, constants, spec.derived_exprs)
    # The default configuration (else the first legal one) stands for the problem's launch;
    # with nothing legal, the default still does: a size below 1 (n = -5) empties the space
    # by divisibility, and that is the problem to name.
    config = (
        spec.default if spec.default is not None and space.index(spec.default) is not None else None
    )
    if config is None:
        config = space.config(0) if len(space) else spec.default
    if config is not None:
        memory = (
            device.global_mem_bytes if device is not None and device.global_mem_bytes > 0 else None
        )
        check_launch(spec, config, problem, memory)
    return space


def excluded_by(
    spec: KernelSpec,
    config: Config,
    problem: Mapping[str, Any] | None = None,
    constraints: Sequence[Constraint] | None = None,
) -> str:
    """The first of ``constraints`` (default: the kernel's own restrictions) that ``config``
    breaks at ``problem``, or "" when it keeps them all (a space of that one configuration, so
    no enumeration)."""
    params = [Param(p.name, (config[p.name],), p.kind, p.define) for p in spec.params]
    if constraints is None:
        constraints = [Constraint.of(r) for r in spec.restrictions]
    one = Space(params, constraints, spec.env({}, problem or Problem()), spec.derived_exprs)
    return next((label for label, n, _ in one.report.removed_by if n), "")
