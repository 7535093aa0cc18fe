"""Layer 1: search spaces. Parameters + constraints -> legal configurations, vectorised.
Constraint strings are parsed with an AST whitelist (perfport._core.expr), never eval'd."""

from perfport.space.kernel_space import device_constraints, kernel_space
from perfport.space.space import Constraint, ConstraintSource, PruningReport, Space

__all__ = [
    "Constraint",
    "ConstraintSource",
    "PruningReport",
    "Space",
    "device_constraints",
    "kernel_space",
]
