"""Which of a bundle's shipped configurations may launch at a problem.

A selector is fitted on the problems that were measured; at a problem outside them its tree
may pick a configuration that the kernel's restrictions forbid there (``K % TS == 0`` at
K = 24), which would launch wrongly or not at all. Before launching, the pick is checked
against the kernel's restrictions and the launch's own rules (each global size a multiple of
its local size; with a device, its work-group and local-memory limits), as perfport's space
checks them for a problem; an illegal pick falls back to the first legal configuration in
the bundle's preference order (``preference_order``). A Dispatcher also skips the
configurations the device itself refused (a failed build or launch), passed as ``excluded``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Config, DeviceInfo, KernelSpec, SpecError
from perfport.select.bundle import TRAIN_PERFORMANCE, Bundle
from perfport.select.emit_rules import divisibility_rules, preference
from perfport.select.errors import SelectError
from perfport.space import Constraint
from perfport.space.kernel_space import excluded_by, spec_device_constraints


@dataclass(frozen=True)
class LegalChoice:
    """What a bundle launches at one problem: ``index`` into its configurations; ``predicted``
    is the selector's own pick and ``illegal`` why it may not launch ("" when it may, and
    then ``index == predicted``)."""

    index: int
    predicted: int
    illegal: str = ""

    @property
    def fell_back(self) -> bool:
        return self.index != self.predicted


def preference_order(bundle: Bundle) -> tuple[int, ...]:
    """The shipped configurations, best first: by their training performance where the bundle
    records it (ties and older bundles: in the bundle's order)."""
    # The generated selectors' select_legal falls back in the same order (emit_rules).
    return preference(bundle.metadata.get(TRAIN_PERFORMANCE), len(bundle.configs))


class Legality:
    """The rules a configuration of ``spec`` keeps to launch at a problem: the kernel's
    restrictions, and the launch's (on ``device`` where given). Built once: parsing the
    expressions costs more than checking them."""

    def __init__(self, spec: KernelSpec, device: DeviceInfo | None = None) -> None:
        self.spec = spec
        self.device = device
        self._constraints = [Constraint.of(r) for r in spec.restrictions]
        self._constraints += _launch_constraints(spec, device)

    def reason(self, config: Config, problem: Mapping[str, Any]) -> str:
        """The first rule ``config`` breaks at ``problem`` (complete: the kernel's defaults
        merged in), or "" when it may launch."""
        try:
            return excluded_by(self.spec, config, problem, self._constraints)
        except SpecError as exc:  # e.g. a restriction that divides by zero at this problem
            return str(exc)


def _launch_constraints(spec: KernelSpec, device: DeviceInfo | None) -> list[Constraint]:
    if device is not None:
        return spec_device_constraints(spec, device)
    # Without a device only what holds on every device: each global size a multiple of its
    # local size (the rules the generated selectors' legal() checks too).
    return [Constraint.of(text, label=label) for label, text in divisibility_rules(spec)]


def legal_choice(
    bundle: Bundle,
    legality: Legality,
    problem: Mapping[str, Any],
    excluded: Mapping[int, str] | None = None,
) -> LegalChoice:
    """The configuration to launch at ``problem`` (complete): the selector's pick where it is
    legal, else the first legal one in ``preference_order``; a SelectError when none is.
    ``excluded`` maps configuration indices the device refused at ``problem`` (a failed
    build or launch) to why: they are skipped as illegal ones are."""
    excluded = excluded or {}
    predicted = bundle.choose(problem)
    reason = excluded.get(predicted)
    if reason is None:
        reason = legality.reason(bundle.configs[predicted], problem)
        if not reason:
            return LegalChoice(predicted, predicted)
    for j in preference_order(bundle):
        if j != predicted and j not in excluded and not legality.reason(bundle.configs[j], problem):
            return LegalChoice(j, predicted, reason)
    at = f"{legality.spec.name} at {_text(problem, bundle.features)}"
    if excluded:  # the last refusal is the one the caller has just met
        last, why = list(excluded.items())[-1]
        raise SelectError(
            f"{at}: every shipped configuration was refused or illegal here (configuration "
            f"{_text(bundle.configs[last], bundle.param_names)}: {why}); fit the bundle on "
            "this device"
        )
    n = len(bundle.configs)
    shipped = (
        "the 1 shipped configuration is not"
        if n == 1
        else f"none of the {n} shipped configurations is"
    )
    raise SelectError(
        f"{at}: {shipped} legal (configuration "
        f"{_text(bundle.configs[predicted], bundle.param_names)} breaks {reason}); fit the "
        "bundle on problems like this one, or give a problem the kernel allows"
    )


def _text(values: Mapping[str, Any], names: Sequence[str]) -> str:
    shown = [n for n in names if n in values] or list(values)
    return " ".join(f"{n}={values[n]}" for n in shown)
