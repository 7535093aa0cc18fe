"""A caller's list or mapping argument checked before use: a bare string where a list goes
would be taken apart character by character ('relative' as the methods r, e, l, ...), and a
string where a mapping goes fails deep inside with a TypeError."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from perfport._core.errors import PerfportError, SpecError


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_list(
    value: Any, what: str, error: type[PerfportError] = PerfportError, example: str = ""
) -> tuple[Any, ...]:
    """``value`` (any iterable but a string) as a tuple; else ``error`` naming ``what`` and
    the fix: ``example``, or by default the string given, in a list."""
    if value is None:
        raise error(f"{what} must be a list, () for none, not None")
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        if not example:
            example = f"[{value!r}]" if isinstance(value, str) and len(value) <= 40 else "[...]"
        raise error(
            f"{what} must be a list, e.g. {example}, not {type(value).__name__} {_shown(value)}"
        )
    return tuple(value)


def as_mapping(
    value: Any, what: str, error: type[PerfportError] = PerfportError, example: str = ""
) -> Mapping[str, Any]:
    """``value`` if it is a mapping of names to values (or reads as one to ``dict``: keys
    and lookup, as a pandas row does); else ``error`` naming ``what``."""
    if not isinstance(value, Mapping) and not (
        hasattr(value, "keys") and hasattr(value, "__getitem__")
    ):
        given = f", e.g. {example}" if example else ""
        raise error(
            f"{what} must be a mapping of names to values{given}, not "
            f"{type(value).__name__} {_shown(value)}"
        )
    return value


def as_paths(value: Any, what: str) -> tuple[str, ...]:
    """``value`` (a list of folders: strings or paths) as a tuple of strings; else SpecError."""
    items = as_list(value, what, SpecError, "['include']")
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise SpecError(f"{what} must name folders (strings or paths), not {_shown(item)}")
    return tuple(str(os.fspath(item)) for item in items)
