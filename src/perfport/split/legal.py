"""Checks on a split's parts before any of them runs: together they cover the extent, and each
part's configuration may launch at the part's own problem.

A part is the kernel on a smaller problem (its elements and its halo), so a configuration
legal at the whole problem may not be at the part's: a global size of exactly ``n`` divides
by a work-group of 16 at n = 4096 but not at a part's 2049 (2048 elements and a halo of 1),
and the driver refuses the launch. Each part is checked against the device's launch rules as
perfport's space checks them (``perfport.space.kernel_space``), so the refusal names the
part and the rule, not the driver's INVALID_WORK_GROUP_SIZE. So are the kernel's
restrictions, as ``perfport tune`` checks them, at the part's problem: a kernel may rely on
one instead of a bounds check (``n % wg == 0``), and a part of 2720 elements in work-groups of
256 wrote past its buffers (heap corruption, nothing stored). Plans keep parts whole in their
device's work-groups (``perfport.split.plan``, ``perfport.split.sweep``), so a part breaks a
restriction such as ``wg <= n`` only where it is smaller than one work-group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from perfport._core import Config, DeviceInfo, Expr, KernelSpec, Problem, SpecError, SplitDim
from perfport.space.kernel_space import divisible_sizes, excluded_by, spec_device_constraints


class Part(Protocol):
    """What a check reads of a part (``perfport.split.execute.Part``): its device, its
    configuration and its elements [start, stop) of the extent."""

    @property
    def device(self) -> DeviceInfo: ...
    @property
    def config(self) -> Config: ...
    @property
    def start(self) -> int: ...
    @property
    def stop(self) -> int: ...


def halo(
    env: Mapping[str, Any], split: SplitDim, start: int, stop: int, extent: int
) -> tuple[int, int]:
    """The halo elements a part [start, stop) holds before and after its own (``env``: the
    whole problem's), cut at the extent's ends."""
    before, after = (int(Expr(h, "split halo").value(env)) for h in split.halo)
    return min(before, start), min(after, extent - stop)


def part_problem(
    spec: KernelSpec,
    problem: Problem,
    split: SplitDim | None,
    config: Config,
    start: int,
    stop: int,
) -> Problem:
    """The problem a part runs: the whole ``problem`` with the extent cut to the part's
    elements and halo (``split`` None: a whole run, the problem itself)."""
    if split is None:
        return problem
    extent = int(problem[split.extent])
    lo, hi = halo(spec.env(config, problem), split, start, stop, extent)
    return problem.merged({split.extent: stop - start + lo + hi})


def check_cover(bounds: Sequence[tuple[int, int]], extent: int) -> None:
    """Raise SpecError unless every part lies in [0, extent] and together they leave no
    element of the extent uncovered (an uncovered element would keep garbage in the output)."""
    for k, (a, b) in enumerate(bounds):
        if not 0 <= a <= b <= extent:
            raise SpecError(
                f"part {k} [{a}, {b}) is not a range within the extent [0, {extent}); give "
                "each part start <= stop inside it"
            )
    covered = 0
    for a, b in sorted(p for p in bounds if p[1] > p[0]):
        if a > covered:
            break
        covered = max(covered, b)
    if covered < extent:
        raise SpecError(
            f"parts {[list(p) for p in bounds]} leave elements from {covered} of [0, {extent}) "
            "to no part; give parts that together cover the extent"
        )


def check_parts(
    spec: KernelSpec, problem: Problem, split: SplitDim | None, parts: Sequence[Part]
) -> None:
    """Raise SpecError naming the first part with elements whose configuration may not
    launch at its own problem on its device; with ``split``, also unless the parts cover
    the extent (``check_cover``)."""
    if split is not None:
        check_cover([(p.start, p.stop) for p in parts], int(problem[split.extent]))
    why = refusal(spec, problem, split, parts)
    if why:
        raise SpecError(why)


def refusal(
    spec: KernelSpec, problem: Problem, split: SplitDim | None, parts: Sequence[Part]
) -> str:
    """Why the first part with elements may not launch ("" when every one may)."""
    for k, p in enumerate(parts):
        if p.stop > p.start:
            why = part_refusal(spec, problem, split, p.device, p.config, p.start, p.stop)
            if why:
                return f"part {k} [{p.start}, {p.stop}) {why}"
    return ""


def part_refusal(
    spec: KernelSpec,
    problem: Problem,
    split: SplitDim | None,
    device: DeviceInfo,
    config: Config,
    start: int,
    stop: int,
) -> str:
    """Why ``config`` may not launch on ``device`` as the part [start, stop) ("" when it
    may): the kernel's restriction or launch rule it breaks at the part's problem, its sizes
    and the fix."""
    sub = part_problem(spec, problem, split, config, start, stop)
    where = ""
    if split is not None:
        held = int(sub[split.extent])
        where = f" ({split.extent}={held}{' with its halo' if held != stop - start else ''})"
    restriction = excluded_by(spec, config, sub)
    if restriction:
        return (
            f"on {device.id} with {dict(config)} breaks the kernel's restriction {restriction} "
            f"at its problem{where}; give that device a part whole in its work-groups, or a "
            "configuration that keeps the restriction there"
        )
    broken = excluded_by(spec, config, sub, spec_device_constraints(spec, device))
    if not broken:
        return ""
    geometry = spec.geometry(spec.env(config, sub))
    sizes = f"global size {list(geometry.global_size)}, local size {list(geometry.local_size)}"
    head = f"on {device.id} with {dict(config)} cannot launch at its problem{where}: {sizes}"
    for g, lo in divisible_sizes(spec.global_size, spec.local_size):
        if broken.startswith(f"{g} % {lo} == 0"):  # the rule's label, unbracketed (keys)
            return (
                f"{head} breaks {_bracketed(g)} % {_bracketed(lo)} == 0 (global divisible by "
                f"local); pad the kernel's global size to whole work-groups (round_up({g}, "
                f"{lo}), with a bounds check in the kernel: docs/kernel-spec.md) so that any "
                "part can launch"
            )
    head = f"{head} breaks {broken}"
    return f"{head}; give that device a configuration legal at that size"


def _bracketed(text: str) -> str:
    """``text`` as an operand of %: 'n + 2' reads as n + (2 % wg) without brackets."""
    plain = text.strip()
    return plain if plain.isidentifier() or plain.isdigit() else f"({plain})"
