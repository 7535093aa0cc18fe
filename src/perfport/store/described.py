"""A stored kernel's description (what ``KernelSpec.describe`` gave, or an imported kernel's),
for the exports and tools that need its parameters. Each campaign keeps the description it ran
with (schema 11): a spec edited under the same source and name (another default, other
values) is the same kernel, whose own row keeps the description stored first, so readers of
campaigns' results ask for theirs; a campaign stored before keeps its kernel's."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from perfport.store.store import Store

# A campaign's description (of campaigns g, kernels k): its own, else (stored before schema 11)
# its kernel's.
CAMPAIGN_SPEC = (
    "COALESCE((SELECT cs.spec FROM campaign_specs cs WHERE cs.campaign_id = g.id), k.spec)"
)


def _parsed(text: str | None) -> dict[str, Any]:
    spec = json.loads(text) if text else {}
    return spec if isinstance(spec, dict) else {}


def campaign_specs(store: Store, campaigns: Collection[str]) -> list[dict[str, Any]]:
    """The descriptions the campaigns with these keys ran with, the newest campaign's first."""
    if not campaigns:
        return []
    marks = ", ".join("?" for _ in campaigns)
    rows = store.query(
        f"SELECT {CAMPAIGN_SPEC} FROM campaigns g JOIN kernels k ON k.id = g.kernel_id "
        f"WHERE g.key IN ({marks}) ORDER BY g.id DESC",
        tuple(campaigns),
    )
    return [_parsed(r[0]) for r in rows]


def kernel_spec(
    store: Store,
    kernel_hash: str,
    name: str | None = None,
    campaigns: Collection[str] = (),
) -> dict[str, Any]:
    """A stored kernel's description (``KernelSpec.describe``, or an imported kernel's): that
    of the newest of ``campaigns`` (keys of the kernel's campaigns whose results are read),
    else of the kernel named ``name`` with this source (specs over one source each have
    theirs); without a name, of the first stored with this source."""
    found = campaign_specs(store, campaigns)
    if found:
        return found[0]
    rows = store.query(
        "SELECT spec FROM kernels WHERE source_hash = ? AND (? IS NULL OR name = ?) ORDER BY id",
        (kernel_hash, name, name),
    )
    return _parsed(rows[0][0]) if rows else {}


def declared_params(
    store: Store,
    kernel_hash: str,
    name: str | None = None,
    campaigns: Collection[str] = (),
) -> dict[str, list[Any]]:
    """A stored kernel's parameters and the values it declares (``kernel_spec``'s kernel);
    given ``campaigns``, the values any of them declared (campaigns of an edited spec may
    declare others), the newest campaign's first."""
    specs = campaign_specs(store, campaigns) or [kernel_spec(store, kernel_hash, name)]
    declared: dict[str, list[Any]] = {}
    for spec in specs:
        for p in spec.get("params", []):
            values = declared.setdefault(p["name"], [])
            values.extend(v for v in p["values"] if v not in values)
    return declared
