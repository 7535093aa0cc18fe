"""Layer 1: search spaces. Parameters + constraints -> legal configurations, vectorised.
Constraint strings are parsed with an AST whitelist (perfport._core.expr), never eval'd.
Kernel Tuner's T1 and BAT's CAFF space files are read by perfport.store.formats.search_space."""

from perfport.space.kernel_space import (
    device_constraints,
    empty_space_hint,
    excluded_by,
    kernel_space,
    spec_device_constraints,
)
from perfport.space.space import Constraint, ConstraintSource, PruningReport, Space

__all__ = [
    "Constraint",
    "ConstraintSource",
    "PruningReport",
    "Space",
    "device_constraints",
    "empty_space_hint",
    "excluded_by",
    "kernel_space",
    "spec_device_constraints",
]
