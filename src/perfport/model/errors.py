"""The model capability's error: bad model expressions, unknown features, calibrations that
do not converge. One line each, naming the problem and the fix."""

from __future__ import annotations

from perfport._core.errors import PerfportError


class ModelError(PerfportError):
    """A model, feature or calibration cannot be used as given."""


class UncountableKernel(ModelError):
    """loopy cannot compute a kernel's statistics (its counting raised): the kernel is skipped
    where the others can still be used."""


class BadProblem(ModelError):
    """A measurement's problem does not give its kernel's sizes: the row is wrong, not the
    kernel (refused, naming the row; never skipped with the kernel's other rows)."""
