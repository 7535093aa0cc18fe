"""Restrictions of a kernel's parameters: whitelisted expressions, or, in a Python spec,
functions given each configuration as a dict of parameter values (as Kernel Tuner takes
lambdas). TOML and YAML specs hold only expressions: a file is data, never code."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Union

# A restriction: a whitelisted expression, or (Python specs) a function of the configuration.
Restriction = Union[str, Callable[[dict[str, Any]], Any]]  # noqa: UP007 (a runtime alias)


def as_restrictions(value: Any) -> tuple[Restriction, ...]:
    if isinstance(value, str | int) or callable(value):
        value = (value,)
    return tuple(v if callable(v) else str(v) for v in value)


def restriction_text(restriction: Restriction) -> str:
    """How a restriction is shown and stored: its expression, or a function's source line
    (stable across runs, unlike its address), else its qualified name."""
    if isinstance(restriction, str):
        return restriction
    try:
        source = " ".join(inspect.getsource(restriction).split())
    except (OSError, TypeError):  # defined in a REPL or built in
        source = ""
    name = getattr(restriction, "__qualname__", type(restriction).__name__)
    text = f"python: {source or name}"
    return text if len(text) <= 200 else text[:197] + "..."
