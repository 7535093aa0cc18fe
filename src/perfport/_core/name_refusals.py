"""Why an expression of a kernel spec may not use a name: one the spec does not declare, a
launch-time value where something compiled in is computed, or a value of the configuration
where arrays (one per problem) are sized; and the names a parameter may not have."""

from __future__ import annotations

from collections.abc import Sequence, Set

from perfport._core.dtypes import DTYPE_NAMES
from perfport._core.errors import SpecError


def check_type_names(what: str, params: Sequence[str], problem: Sequence[str]) -> None:
    """A parameter or problem value named like an element type ('float') would be read for
    it wherever a type is written as a name (dtype 'float' became the parameter's value)."""
    for name in [*params, *problem]:
        if name in DTYPE_NAMES:
            kind = "parameter" if name in params else "problem value"
            raise SpecError(
                f"{what}: {kind} {name!r} has the name of an element type, which types such "
                f"as dtype '{name}' would read as its value; rename it, e.g. {name}_"
            )


def refused_names(
    label: str, unknown: Set[str], params: Set[str], per_config: Set[str], of_array: bool
) -> str:
    """What is wrong with the names an expression may not use: a name the spec declares is
    named as what it is (a launch-time parameter, a value of the configuration), not unknown."""
    if unknown - per_config:
        return f"uses unknown name(s) {', '.join(sorted(unknown - per_config))}"
    names = ", ".join(sorted(unknown))
    if of_array:
        return (
            f"uses {names} (of the configuration), but arrays are allocated once "
            "per problem and shared by every configuration: size them from problem values, "
            "for the configuration that needs the most"
        )
    # outside arrays, only what is known at launch alone is refused
    subject, fix = ("it", f"stop using {names} there")
    if label.startswith("define "):
        subject, fix = ("a define", "drop the define")
    if unknown <= params:
        return (
            f"uses launch-time parameter(s) {names}, which {subject} cannot use; make "
            f"{names} compile-time (kind compile, the default) or {fix}"
        )
    return (
        f"uses {names}, derived from launch-time parameters, which {subject} cannot use; make "
        f"those parameters compile-time (kind compile, the default) or {fix}"
    )
