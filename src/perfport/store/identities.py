"""The rows that name what a result is of: devices by fingerprint, kernels by source and name,
problems and configurations by their canonical keys. Each is found, or inserted once however
many processes ask at the same time."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from perfport._core import Config, DeviceInfo, KernelSpec, Problem


def external_kernel_hash(name: str, origin: str, params: dict[str, list[Any]]) -> str:
    """The source hash standing for a kernel known only from imported data."""
    identity = json.dumps([origin, name, params], sort_keys=True)
    return "external:" + hashlib.sha256(identity.encode()).hexdigest()


class Identities:
    """The identity rows of a results database (``Store`` is one)."""

    _conn: sqlite3.Connection

    def _upsert(
        self, table: str, unique: dict[str, Any], extra: dict[str, Any] | None = None
    ) -> int:
        where = " AND ".join(f"{k} = ?" for k in unique)
        row = self._conn.execute(
            f"SELECT id FROM {table} WHERE {where}", tuple(unique.values())
        ).fetchone()
        if row:
            return int(row[0])
        values = {**unique, **(extra or {})}
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        cur = self._conn.execute(
            f"INSERT OR IGNORE INTO {table} ({cols}) VALUES ({marks})", tuple(values.values())
        )
        if cur.rowcount:
            return int(cur.lastrowid or 0)
        return self._upsert(table, unique)  # another process inserted it first

    def device_id(self, device: DeviceInfo) -> int:
        return self._upsert(
            "devices",
            {"fingerprint": device.fingerprint},
            {
                "backend": device.backend.value,
                "name": device.name,
                "vendor": device.vendor,
                "type": device.type.value,
                "driver": device.driver,
                "info": json.dumps(device.to_json()),
            },
        )

    def external_kernel_id(self, name: str, origin: str, params: dict[str, list[Any]]) -> int:
        """A kernel known only from imported data: identified by its origin, name and
        parameter values, since there is no source to hash."""
        digest = external_kernel_hash(name, origin, params)
        description = {
            "name": name,
            "origin": origin,
            "params": [{"name": k, "values": v} for k, v in params.items()],
        }
        return self._upsert(
            "kernels",
            {"source_hash": digest, "name": name},
            {"language": "external", "entry": name, "source": "", "spec": json.dumps(description)},
        )

    def kernel_id(self, spec: KernelSpec) -> int:
        """The spec's kernel row, by its code and its name: specs over one source with other
        names (other parameters, a renamed spec) have rows, results and descriptions of their
        own. A spec of the same name and code keeps the description stored first."""
        return self._upsert(
            "kernels",
            {"source_hash": spec.source_hash, "name": spec.name},
            {
                "language": spec.language.value,
                "entry": spec.entry,
                "source": spec.source,
                "spec": json.dumps(spec.describe()),
            },
        )

    def kernel_source(self, kernel_id: int) -> str | None:
        """The source hash of a kernel row (None: no such row)."""
        row = self._conn.execute(
            "SELECT source_hash FROM kernels WHERE id = ?", (kernel_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def problem_id(self, problem: Problem) -> int:
        return self._upsert("problems", {"key": problem.key})

    def config_id(self, kernel_id: int, config: Config) -> int:
        return self._upsert("configs", {"kernel_id": kernel_id, "key": config.key})


def short_hash(kernel_hash: str) -> str:
    """A kernel's source hash as shown to tell kernels of one name apart: the prefix that
    ``--kernel`` takes."""
    return kernel_hash[:12]
