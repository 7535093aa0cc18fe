"""The error kinds of kernel-subset selection."""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from perfport._core import PerfportError


class SelectError(PerfportError):
    """Selection input is unusable: an ambiguous store, a malformed table file, an empty
    training set. The message is one line naming the problem and the fix."""


class UnknownNameError(SelectError, ValueError):
    """A classifier, pruning or normalisation name selection does not have; a ValueError too,
    as the enums' own lookups raised one."""


_E = TypeVar("_E", bound=Enum)


def member(enum: type[_E], value: _E | str, what: str) -> _E:
    """``enum(value)``, or UnknownNameError naming ``what`` and the valid names."""
    try:
        return enum(value)
    except ValueError:
        known = ", ".join(e.value for e in enum)
        raise UnknownNameError(f"unknown {what} {value!r}; choose from {known}") from None
