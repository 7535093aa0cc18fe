"""Stored split plans (``perfport split``): which devices shared a kernel's run, with which
configurations, the plan's JSON and, once run, what was measured. Plans are records of the
split package; the store keeps them as JSON so that it needs nothing above layer 2."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import Config, DeviceInfo, KernelSpec, Problem
from perfport._core.interrupts import guarded
from perfport._core.version import __version__
from perfport.store.store import Store


@dataclass(frozen=True)
class StoredPlan:
    """One stored plan: ``plan`` and ``run`` are the JSON the split package wrote."""

    id: int
    kernel: str
    problem: dict[str, Any]
    devices: tuple[str, ...]  # fingerprints, in plan order
    dimension: int
    configs: tuple[dict[str, Any], ...]
    plan: dict[str, Any]
    run: dict[str, Any] | None
    created: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kernel": self.kernel,
            "problem": self.problem,
            "devices": list(self.devices),
            "dimension": self.dimension,
            "configs": list(self.configs),
            "plan": self.plan,
            "run": self.run,
            "created": self.created,
        }


def record_plan(
    store: Store,
    spec: KernelSpec,
    problem: Problem,
    devices: Sequence[DeviceInfo],
    configs: Sequence[Config],
    plan: Mapping[str, Any],
    run: Mapping[str, Any] | None = None,
) -> int:
    """Store a plan (and its run, when it ran); return its id."""
    with guarded():  # an interrupt waits until the row is written
        kernel_id, problem_id = store.kernel_id(spec), store.problem_id(problem)
        for d in devices:
            store.device_id(d)
        cur = store._conn.execute(
            "INSERT INTO split_plans (kernel_id, problem_id, devices, dimension, configs, plan, "
            "run, tool_version, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                kernel_id,
                problem_id,
                json.dumps([d.fingerprint for d in devices]),
                int(plan["dimension"]),
                json.dumps([dict(c) for c in configs]),
                json.dumps(dict(plan)),
                None if run is None else json.dumps(dict(run)),
                __version__,
                time.time(),
            ),
        )
    return int(cur.lastrowid or 0)


def stored_plans(store: Store, kernel: str | None = None) -> list[StoredPlan]:
    """Every stored plan, oldest first; only those of kernels named ``kernel`` when given."""
    sql = (
        "SELECT s.id, k.name AS kernel, p.key AS problem, s.devices, s.dimension, s.configs, "
        "s.plan, s.run, s.created FROM split_plans s JOIN kernels k ON k.id = s.kernel_id "
        "JOIN problems p ON p.id = s.problem_id"
    )
    rows = store.query(
        sql + (" WHERE k.name = ?" if kernel else "") + " ORDER BY s.id",
        (kernel,) if kernel else (),
    )
    return [
        StoredPlan(
            id=int(r["id"]),
            kernel=r["kernel"],
            problem=json.loads(r["problem"]),
            devices=tuple(json.loads(r["devices"])),
            dimension=int(r["dimension"]),
            configs=tuple(json.loads(r["configs"])),
            plan=json.loads(r["plan"]),
            run=None if r["run"] is None else json.loads(r["run"]),
            created=float(r["created"]),
        )
        for r in rows
    ]
