"""The tool version, stored with every campaign and result."""

__version__ = "0.1.0"
