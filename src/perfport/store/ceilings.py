"""Stored device ceilings (``perfport roofline``): per device fingerprint, the most each
ceiling measured over its runs, read back to give every result of that device its roofline
fraction."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from perfport._core import DeviceInfo
from perfport._core.interrupts import guarded
from perfport._core.metrics import Ceilings
from perfport._core.version import __version__
from perfport.store.store import Store

# The stored ceilings a new run may not lower: a ceiling is the most the device reached, and a
# run on a busy machine measures less (copy 9.3 GB/s against 19.1 an hour before, on the
# shared 2-core machine), which silently doubled every roofline fraction of that device.
_HIGHEST = ("copy_GBps", "read_GBps", "write_GBps", "fp32_GFLOPs", "fp64_GFLOPs")


def save_ceilings(
    store: Store, device: DeviceInfo, ceilings: Ceilings, detail: Mapping[str, Any]
) -> tuple[Ceilings, tuple[str, ...]]:
    """Store ``ceilings`` for ``device``, each the higher of this run's and the one stored
    before (the copy curve too, point by point). Returns what is stored and the names of the
    ceilings kept from before."""
    if ceilings.device != device.fingerprint:
        raise ValueError("ceilings of another device")
    before = stored_ceilings(store).get(device.fingerprint)
    kept: tuple[str, ...] = ()
    if before is not None:
        kept = tuple(
            name
            for name in _HIGHEST
            if (getattr(before, name) or 0.0) > (getattr(ceilings, name) or 0.0)
        )
        curve = dict(before.copy_curve)
        for moved, gbps in ceilings.copy_curve:
            curve[moved] = max(gbps, curve.get(moved, 0.0))
        ceilings = dataclasses.replace(
            ceilings,
            copy_curve=tuple(sorted(curve.items())),
            **{name: getattr(before, name) for name in kept},
        )
    with guarded():  # one statement (autocommit); an interrupt waits until it is written
        store._conn.execute(
            "INSERT OR REPLACE INTO ceilings (fingerprint, device, copy_gbps, read_gbps, "
            "write_gbps, fp32_gflops, fp64_gflops, detail, tool_version, created, copy_curve) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                device.fingerprint,
                json.dumps(device.to_json()),
                ceilings.copy_GBps,
                ceilings.read_GBps,
                ceilings.write_GBps,
                ceilings.fp32_GFLOPs,
                ceilings.fp64_GFLOPs,
                json.dumps(dict(detail)),
                __version__,
                ceilings.measured,
                json.dumps([[b, g] for b, g in ceilings.copy_curve])
                if ceilings.copy_curve
                else None,
            ),
        )
    return ceilings, kept


def stored_ceilings(store: Store) -> dict[str, Ceilings]:
    """Every stored device's ceilings, by fingerprint."""
    try:
        rows = store.query("SELECT * FROM ceilings")  # a read-only older store: no copy_curve
    except sqlite3.OperationalError:  # a read-only view of a store older than the table
        return {}
    return {
        r["fingerprint"]: Ceilings(
            device=r["fingerprint"],
            copy_GBps=float(r["copy_gbps"]),
            read_GBps=float(r["read_gbps"]),
            write_GBps=float(r["write_gbps"]),
            fp32_GFLOPs=float(r["fp32_gflops"]),
            fp64_GFLOPs=None if r["fp64_gflops"] is None else float(r["fp64_gflops"]),
            measured=float(r["created"]),
            # a Row's `in` looks at its values, not its column names
            copy_curve=_curve(r["copy_curve"] if "copy_curve" in r.keys() else None),  # noqa: SIM118
        )
        for r in rows
    }


def _curve(text: str | None) -> tuple[tuple[float, float], ...]:
    """The stored copy curve; () where none was measured (ceilings stored before it)."""
    if not text:
        return ()
    return tuple((float(b), float(g)) for b, g in json.loads(text))
