"""Why an expression of a kernel spec may not use a name: one the spec does not declare, a
launch-time value where something compiled in is computed, or a value of the configuration
where arrays (one per problem) are sized."""

from __future__ import annotations

from collections.abc import Set


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
