"""``perfport import``: a Kernel Tuner cache or a T4 file becomes one campaign of an external
device and kernel, so every query, export and replay works on it. The write is one
transaction, so a bad file changes nothing."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

from perfport._core import StoreError
from perfport._core.interrupts import guarded
from perfport.space import PruningReport
from perfport.store.formats.imported import Imported, external_device
from perfport.store.formats.kt_cache import is_kt_cache_json, kt_cache_from_json, to_imported
from perfport.store.formats.t4 import is_t4_json, t4_from_json
from perfport.store.formats.untrusted import read_json
from perfport.store.store import CampaignStatus, Store, external_kernel_hash


def parse(path: str | Path, device: str | None = None, kernel: str | None = None) -> Imported:
    """Parse a Kernel Tuner cache or a T4 file. ``device``/``kernel`` name what the file does
    not (T4 files name neither; some caches have an empty device name)."""
    data = read_json(path, "a Kernel Tuner cache or T4 file")
    stem = Path(path).name.split(".")[0]
    if is_kt_cache_json(data):
        return to_imported(kt_cache_from_json(data, str(path)), device, kernel)
    if is_t4_json(data):
        return t4_from_json(data, str(path), device or stem, kernel or stem)
    raise StoreError(
        f"{path}: neither a Kernel Tuner cache (no 'cache') nor a T4 file (no 'results')"
    )


def import_file(
    store: Store, path: str | Path, device: str | None = None, kernel: str | None = None
) -> Imported:
    """Parse ``path`` and store it as one campaign. Importing the same file again adds nothing."""
    return store_imported(store, parse(path, device, kernel), path)


def store_imported(store: Store, imported: Imported, path: str | Path) -> Imported:
    """Store what ``parse`` read from ``path`` as one campaign (keyed by the file's content,
    so storing the same file again adds nothing)."""
    content = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    cartesian = math.prod(len(v) for v in imported.params.values())
    report = PruningReport(cartesian, len(imported.measurements), ())  # what the file tells
    info = external_device(imported.device)
    key = f"import-{imported.format}-{content}"
    kernel_hash = external_kernel_hash(imported.kernel, imported.format, imported.params)
    store.check_campaign_key(key, info, kernel_hash, imported.problem)  # before any write
    ids = (
        store.device_id(info),
        store.external_kernel_id(imported.kernel, imported.format, imported.params),
        store.problem_id(imported.problem),
    )
    settings = {"imported_from": str(path), "format": imported.format}
    # An interrupt waits for the write to end: the campaign is whole, or not there at all.
    with guarded():
        campaign = store.open_campaign(key, ids, "imported", 0, settings, report)
        store.record_many(campaign, imported.measurements)
        store.set_status(campaign, CampaignStatus.COMPLETE)
    return imported
