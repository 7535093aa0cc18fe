"""Lazy imports of optional dependencies, with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from perfport._core.errors import MissingExtra

# The extra that installs each optional package a user's own file may import (a loopy space
# file imports loopy), so a missing one is named with its fix rather than as a bare import error.
EXTRA_OF = {
    "loopy": "model", "islpy": "model", "pymbolic": "model", "scipy": "model",
    "cupy": "cuda", "pyopencl": "pocl", "optuna": "optuna", "sklearn": "models",
    "matplotlib": "plots", "distributed": "cluster", "dask": "cluster",
}  # fmt: skip


def missing_extra(exc: ModuleNotFoundError, where: str) -> MissingExtra | None:
    """The MissingExtra for ``exc`` when the missing package is one an extra installs."""
    top = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None or exc.name != top:  # a missing submodule of an installed package
        return None
    return MissingExtra(
        f"{where} imports '{top}', which is not installed; install it with: "
        f"pip install 'perfport[{extra}]'"
    )


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
