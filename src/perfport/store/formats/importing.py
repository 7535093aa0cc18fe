"""``perfport import``: a Kernel Tuner cache or a T4 file becomes one campaign of an external
device and kernel, so every query, export and replay works on it. The write is one
transaction, so a bad file changes nothing."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, Measurement, StoreError
from perfport._core.identifiers import is_printable_name
from perfport.space import PruningReport
from perfport.store.formats.imported import Imported, external_device, objective_note
from perfport.store.formats.kt_cache import (
    close_open_cache,
    is_kt_cache_json,
    kt_cache_from_json,
    to_imported,
)
from perfport.store.formats.t4 import is_t4_json, t4_from_json
from perfport.store.formats.untrusted import read_json
from perfport.store.identities import external_kernel_hash
from perfport.store.store import CampaignStatus, Store

_IMPORTABLE = (
    "a Kernel Tuner cache or T4 file (.json or .json.gz; perfport's own csv and json exports "
    "do not import, its kt-cache and t4 exports do)"
)


def parse(
    path: str | Path,
    device: str | None = None,
    kernel: str | None = None,
    notice: Callable[[str], None] | None = None,
) -> Imported:
    """Parse a Kernel Tuner cache or a T4 file. ``device``/``kernel`` name what the file does
    not (T4 files name neither; some caches have an empty device name). ``notice`` is told,
    in one line, where the file ranked by another objective than time (``objective_note``);
    without one, that line is a UserWarning."""
    # Kernel Tuner reads back a cache its interrupted run left open; so does perfport.
    data = read_json(path, _IMPORTABLE, close_open_cache)
    stem = Path(path).name.split(".")[0]
    if is_kt_cache_json(data):
        imported = to_imported(kt_cache_from_json(data, str(path)), device, kernel)
    elif is_t4_json(data):
        imported = t4_from_json(data, str(path), device or stem, kernel or stem)
        imported = dataclasses.replace(imported, objective=_t4_objectives(data))
    else:
        raise StoreError(
            f"{path}: neither a Kernel Tuner cache (no 'cache') nor a T4 file (no 'results' and "
            f"'schema_version'){_what_it_is(data)}; give a Kernel Tuner cache or T4 results file"
        )
    for what, name, flag in (("device", imported.device, "--device-name"),
                             ("kernel", imported.kernel, "--kernel-name")):  # fmt: skip
        if not is_printable_name(name):  # an escape sequence drove the terminal; 100,000
            # characters stalled the table's line wrapping
            raise StoreError(
                f"{path}: its {what} name {name[:40]!r} is not 1-200 printable characters; "
                f"name it with {flag} NAME"
            )
    note = objective_note(str(path), imported.objective)
    if note is not None and imported.measurements:
        if notice is None:
            warnings.warn(note, stacklevel=2)
        else:
            notice(note)
    if not imported.measurements:  # it made an empty campaign and said "imported 0"
        raise StoreError(
            f"{path}: holds no results, so there is nothing to import; give a file of a run that "
            "measured at least one configuration"
        )
    return imported


def _t4_objectives(data: dict[str, Any]) -> str:
    """The objectives a T4 file's results name (each result lists its ``objectives``),
    comma-joined: "time" where they name only time, or none."""
    names = {
        str(name)[:40]: None
        for r in data["results"]
        if isinstance(r, dict) and isinstance(r.get("objectives"), list)
        for name in r["objectives"]
    }
    return ", ".join(names) if set(names) - {"time"} else "time"


def _what_it_is(data: object) -> str:
    """What a JSON file that is not importable looks like, where a user may mistake it for
    one that is; "" otherwise."""
    if isinstance(data, list):
        return (
            " but a list, as perfport's own JSON export is: only its kt-cache and t4 exports import"
        )
    if isinstance(data, dict) and "Results" in data and "Metadata" in data:
        return " but a KTT results file, which perfport does not read"
    if isinstance(data, dict) and "ConfigurationSpace" in data:
        return " but a T1 search space: `perfport space` reads it"
    return ""


def import_file(
    store: Store, path: str | Path, device: str | None = None, kernel: str | None = None
) -> Imported:
    """Parse ``path`` and store it as one campaign. Importing the same file again adds nothing."""
    imported = parse(path, device, kernel)
    store_imported(store, imported, path)
    return imported


def store_imported(store: Store, imported: Imported, path: str | Path) -> int:
    """Store what ``parse`` read from ``path`` as one campaign, keyed by the file's content
    and the device, kernel and problem it was stored as: storing the same file again adds
    nothing, and the same file under another ``device`` is another campaign. A result an
    earlier import of the same device, kernel and problem holds already (same configuration,
    outcome and times: a Kernel Tuner cache that has grown since) is not stored again.
    Returns how many results were new."""
    content = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    cartesian = math.prod(len(v) for v in imported.params.values())
    report = PruningReport(cartesian, len(imported.measurements), ())  # what the file tells
    info = external_device(imported.device)
    kernel_hash = external_kernel_hash(imported.kernel, imported.format, imported.params)
    settings = {"imported_from": str(path), "format": imported.format, **imported.settings}
    # One transaction from the first row to the status: an import that fails anywhere (a
    # full disk, an interrupt) leaves the store as it was, with no campaign half there.
    with store.atomic():
        prefix = f"import-{imported.format}-"
        if imported.earlier_problem is not None:
            earlier = dataclasses.replace(imported, problem=imported.earlier_problem)
            with contextlib.suppress(StoreError):  # not imported by an earlier release
                store.campaign(_campaign_key(store, prefix, content, info, kernel_hash, earlier))
                return 0
        key = _campaign_key(store, prefix, content, info, kernel_hash, imported)
        store.check_campaign_key(  # before any write
            key, info, kernel_hash, imported.problem, kernel_name=imported.kernel
        )
        ids = (
            store.device_id(info),
            store.external_kernel_id(imported.kernel, imported.format, imported.params),
            store.problem_id(imported.problem),
        )
        known = _imported_before(store, ids)
        new = [m for m in imported.measurements if _identity(m) not in known]
        if imported.measurements and not new:
            return 0
        campaign = store.open_campaign(key, ids, "imported", 0, settings, report)
        added = store.record_many(campaign, new)
        store.set_status(campaign, CampaignStatus.COMPLETE)
    return added


def _identity(m: Measurement) -> tuple[str, str, bytes | None]:
    """A result as the store keeps it: configuration, outcome, samples."""
    times = np.asarray(m.times_ms, dtype="<f8").tobytes() if m.times_ms else None
    return (m.config.key, m.outcome.value, times)


def _imported_before(store: Store, ids: tuple[int, int, int]) -> set[tuple[str, str, bytes | None]]:
    rows = store.query(
        "SELECT cf.key, r.outcome, s.times FROM results r "
        "JOIN campaigns c ON c.id = r.campaign_id JOIN configs cf ON cf.id = r.config_id "
        "LEFT JOIN samples s ON s.result_id = r.id "
        "WHERE c.device_id = ? AND c.kernel_id = ? AND c.problem_id = ? AND c.strategy = 'imported'",
        ids,
    )
    return {(row[0], row[1], row[2]) for row in rows}


def _campaign_key(
    store: Store, prefix: str, content: str, info: DeviceInfo, kernel_hash: str, imported: Imported
) -> str:
    """The campaign key of an import. Stores written before the key named the device kept
    the file's content alone: such a campaign of this same device, kernel and problem is
    found again, so re-importing its file still adds nothing."""
    legacy = prefix + content
    try:
        store.campaign(legacy)
        store.check_campaign_key(
            legacy, info, kernel_hash, imported.problem, kernel_name=imported.kernel
        )
    except StoreError:
        identity = "\0".join((content, info.fingerprint, kernel_hash, imported.problem.key))
        return prefix + hashlib.sha256(identity.encode()).hexdigest()[:16]
    return legacy
