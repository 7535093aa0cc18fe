"""Stored model calibrations (``perfport model calibrate``), kept per device fingerprint.
Calibrations are records of the model package; the store keeps them as JSON so that it
needs nothing above layer 2."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perfport._core import DeviceInfo
from perfport._core.interrupts import guarded
from perfport._core.version import __version__
from perfport.store.store import Store


@dataclass(frozen=True)
class StoredCalibration:
    """One stored calibration: ``calibration`` is the JSON the model package wrote."""

    id: int
    device: str
    device_fingerprint: str
    output: str
    expression: str
    calibration: dict[str, Any]
    created: float


def record_calibration(
    store: Store, device: DeviceInfo, output: str, expression: str, calibration: Mapping[str, Any]
) -> int:
    """Store a calibration of the model ``output = expression`` on ``device``; its id."""
    with guarded():  # an interrupt waits until the row is written
        device_id = store.device_id(device)
        cur = store._conn.execute(
            "INSERT INTO calibrations (device_id, output, expression, calibration, tool_version, "
            "created) VALUES (?, ?, ?, ?, ?, ?)",
            (
                device_id,
                output,
                expression,
                json.dumps(dict(calibration)),
                __version__,
                time.time(),
            ),
        )
    return int(cur.lastrowid or 0)


def stored_calibrations(store: Store, device: str | None = None) -> list[StoredCalibration]:
    """Every stored calibration, oldest first; only a device's (fingerprint or name) if given."""
    sql = (
        "SELECT c.id, d.name, d.fingerprint, c.output, c.expression, c.calibration, c.created "
        "FROM calibrations c JOIN devices d ON d.id = c.device_id"
    )
    where = " WHERE d.fingerprint = ? OR d.name = ?" if device else ""
    rows = store.query(sql + where + " ORDER BY c.id", (device, device) if device else ())
    return [
        StoredCalibration(
            id=int(r["id"]),
            device=r["name"],
            device_fingerprint=r["fingerprint"],
            output=r["output"],
            expression=r["expression"],
            calibration=json.loads(r["calibration"]),
            created=float(r["created"]),
        )
        for r in rows
    ]
