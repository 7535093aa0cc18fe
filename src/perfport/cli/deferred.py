"""Names a command module binds when it is imported but imports on first use.

Building the parser imports every command module, and ``perfport --help`` does nothing else;
a handler runs one command. Most handlers import what they need inside their body; those
that reach their dependencies as module globals get them from ``Deferred``, which binds a
name without importing its module.
"""

from __future__ import annotations

import importlib
from typing import Any


class Deferred:
    """Stands for ``module.name`` (or for ``module`` itself when ``name`` is None): imports it
    on the first call or attribute access, then forwards to it."""

    __slots__ = ("_module", "_name", "_target")

    def __init__(self, module: str, name: str | None = None) -> None:
        self._module, self._name = module, name
        self._target: Any = None

    def _resolve(self) -> Any:
        if self._target is None:
            module = importlib.import_module(self._module)
            self._target = module if self._name is None else getattr(module, self._name)
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._resolve(), attr)

    def __repr__(self) -> str:
        where = self._module if self._name is None else f"{self._module}.{self._name}"
        return f"<deferred {where}>"
