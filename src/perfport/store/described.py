"""A stored kernel's description: what ``KernelSpec.describe`` gave when the kernel (its
source and name) was first stored, or an imported kernel's; for the exports and tools that
need its parameters."""

from __future__ import annotations

import json
from typing import Any

from perfport.store.store import Store


def kernel_spec(store: Store, kernel_hash: str, name: str | None = None) -> dict[str, Any]:
    """A stored kernel's description (``KernelSpec.describe``, or an imported kernel's): of the
    kernel named ``name`` with this source (specs over one source each have theirs); without
    a name, of the first stored with this source."""
    rows = store.query(
        "SELECT spec FROM kernels WHERE source_hash = ? AND (? IS NULL OR name = ?) ORDER BY id",
        (kernel_hash, name, name),
    )
    spec = json.loads(rows[0][0]) if rows else {}
    return spec if isinstance(spec, dict) else {}


def declared_params(
    store: Store, kernel_hash: str, name: str | None = None
) -> dict[str, list[Any]]:
    """A stored kernel's parameters and the values it declares (``kernel_spec``'s kernel)."""
    spec = kernel_spec(store, kernel_hash, name)
    return {p["name"]: list(p["values"]) for p in spec.get("params", [])}
