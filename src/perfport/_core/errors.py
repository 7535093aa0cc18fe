"""Typed errors. Each carries a one-line message that names the problem and the fix.

The CLI prints ``str(error)`` and exits non-zero; it never shows a traceback for these.
"""

from __future__ import annotations


class PerfportError(Exception):
    """Base of every error perfport raises on purpose (bad input, missing device, ...)."""


class SpecError(PerfportError):
    """A kernel spec (Python, TOML or YAML) is malformed."""


class ExpressionError(SpecError):
    """An expression (size, footprint, constraint) does not parse or does not evaluate."""


class DeviceError(PerfportError):
    """A device id does not exist, or a backend cannot be used."""


class StoreError(PerfportError):
    """The results database cannot be opened or is not a perfport database."""


class SettingsError(PerfportError, ValueError):
    """A run setting (seed, timing, time limit) out of its range; a ValueError too, as the
    value is one."""


class MissingExtra(PerfportError):
    """An optional dependency is not installed."""


class BuildError(Exception):
    """A kernel failed to compile; ``log`` holds the compiler's output. Becomes an outcome."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class LaunchError(Exception):
    """A launch failed. ``refused``: the driver would not start it (INVALID_WORK_GROUP_SIZE,
    out of resources at launch); else the kernel faulted (an illegal address, a queue dead
    after the launch). Becomes an outcome: launch_refused or crashed."""

    def __init__(self, code: str, message: str, refused: bool = True) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.refused = refused


def first_line(exc: BaseException) -> str:
    """What a driver's error says first, as one printable line (its type's name where it says
    nothing): a compiler log or a multi-line driver message shown where one line fits."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    text = "".join(c if c.isprintable() else " " for c in text)
    return text or type(exc).__name__
