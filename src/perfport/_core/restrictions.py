"""Restrictions of a kernel's parameters: whitelisted expressions, or, in a Python spec,
functions given each configuration as a dict of parameter values (as Kernel Tuner takes
lambdas). TOML and YAML specs hold only expressions: a file is data, never code."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from functools import lru_cache
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
        source = _lambda_source(restriction) or " ".join(inspect.getsource(restriction).split())
    except (OSError, TypeError):  # defined in a REPL or built in
        source = ""
    name = getattr(restriction, "__qualname__", type(restriction).__name__)
    text = f"python: {source or name}"
    return text if len(text) <= 200 else text[:197] + "..."


def _lambda_source(function: Any) -> str | None:
    """A lambda's own text, not its whole line (``restrictions=["...", lambda p: ...],``):
    the one lambda the line holds whose arguments are the function's, else None."""
    code = getattr(function, "__code__", None)
    if code is None or code.co_name != "<lambda>":
        return None
    lines, _ = inspect.findsource(function)
    text = "".join(lines)
    tree = _parsed(text)
    if tree is None:
        return None
    arguments = code.co_varnames[: code.co_argcount]
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Lambda)
        and node.lineno == code.co_firstlineno
        and tuple(a.arg for a in node.args.args) == arguments
    ]
    segment = ast.get_source_segment(text, found[0]) if len(found) == 1 else None
    return " ".join(segment.split()) if segment else None


@lru_cache(maxsize=8)
def _parsed(text: str) -> ast.Module | None:
    """A spec file's syntax tree, once per file (each lambda of a space labels from it)."""
    try:
        return ast.parse(text)
    except SyntaxError:
        return None
