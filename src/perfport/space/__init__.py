"""Layer 1: search spaces. Parameters + constraints -> legal configurations, vectorised.
Constraint strings are parsed with an AST whitelist (perfport._core.expr), never eval'd.
Kernel Tuner's T1 and BAT's CAFF space files load too (formats.py)."""

from perfport.space.formats import SpaceDefinition, is_space_file, load_space_file
from perfport.space.kernel_space import device_constraints, kernel_space, spec_device_constraints
from perfport.space.space import Constraint, ConstraintSource, PruningReport, Space

__all__ = [
    "Constraint",
    "ConstraintSource",
    "PruningReport",
    "Space",
    "SpaceDefinition",
    "device_constraints",
    "is_space_file",
    "kernel_space",
    "load_space_file",
    "spec_device_constraints",
]
