"""Lazy imports of optional dependencies, with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from perfport._core.errors import MissingExtra


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise MissingExtra telling the user which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(
            f"{purpose} needs the Python package '{module.split('.')[0]}' ({exc}); "
            f"install it with: pip install 'perfport[{extra}]'"
        ) from None


def sklearn(module: str, purpose: str) -> ModuleType:
    """``sklearn.<module>``, from the ``models`` extra that every learned method shares."""
    return require(f"sklearn.{module}", "models", purpose)
