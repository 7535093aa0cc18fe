"""Restrictions of a kernel's parameters: whitelisted expressions, or, in a Python spec,
functions given each configuration as a dict of parameter values (as Kernel Tuner takes
lambdas). TOML and YAML specs hold only expressions: a file is data, never code."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Union

from perfport._core.containers import as_list
from perfport._core.errors import SpecError

# A restriction: a whitelisted expression, or (Python specs) a function of the configuration.
Restriction = Union[str, Callable[[dict[str, Any]], Any]]  # noqa: UP007 (a runtime alias)


def as_restrictions(value: Any, what: str = "restrictions") -> tuple[Restriction, ...]:
    """Restrictions as a tuple: one given alone is a list of one; a number reads as its
    text. Anything else, a nested list above all (whose text is a non-empty list, always
    true), is a one-line SpecError."""
    if isinstance(value, str | int | float) or callable(value):
        value = (value,)
    if isinstance(value, Mapping):  # its keys would be taken for expressions
        raise SpecError(f"{what} must be a list of expressions, not a mapping {_short(value)}")
    for v in (items := as_list(value, what, SpecError, "['bx * by <= 256']")):
        if not (isinstance(v, str | int | float) or callable(v)):
            nested = "; not a list in the list" if isinstance(v, list | tuple) else ""
            raise SpecError(
                f"{what}: restriction {_short(v)} is a {type(v).__name__}: give each as an "
                f"expression string such as 'bx * by <= 256'{nested}"
            )
    return tuple(v if callable(v) else str(v) for v in items)


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


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
