"""What happened to one configuration."""

from __future__ import annotations

from enum import Enum


class Outcome(Enum):
    """The fate of one configuration in a campaign. Values are stable: they are stored."""

    OK = "ok"
    PRUNED = "pruned"  # skipped before launch: a device or kernel limit rules it out
    COMPILE_ERROR = "compile_error"
    LAUNCH_REFUSED = "launch_refused"  # the driver refused it (INVALID_WORK_GROUP_SIZE, ...)
    WRONG_RESULT = "wrong_result"
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # the worker process died

    @property
    def measured(self) -> bool:
        """True when a trial ran (everything but PRUNED)."""
        return self is not Outcome.PRUNED


class Check(Enum):
    """Whether a result's outputs were checked. Values are stable: they are stored."""

    VERIFIED = "verified"  # compared with the expected outputs (its verified_against)
    REFERENCE = "reference"  # its outputs became the expected ones of later trials
    UNVERIFIED = "unverified"  # it ran correctly as far as anyone knows: nothing to compare with
