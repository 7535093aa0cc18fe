"""The one error kind of kernel-subset selection."""

from __future__ import annotations

from perfport._core import PerfportError


class SelectError(PerfportError):
    """Selection input is unusable: an ambiguous store, a malformed table file, an empty
    training set. The message is one line naming the problem and the fix."""
