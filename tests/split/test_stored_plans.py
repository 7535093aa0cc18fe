"""Split plans are stored in the results database, through its migrations."""

from __future__ import annotations

import sqlite3

from perfport._core import Backend, Config, DeviceInfo, DeviceType
from perfport.kernels import builtin
from perfport.split.plan import SplitPlan, plan_split
from perfport.store import SCHEMA_VERSION, Store
from perfport.store.plans import record_plan, stored_plans


def _device(name: str) -> DeviceInfo:
    return DeviceInfo(
        f"test:{name}", Backend.OPENCL, name, "v", DeviceType.CPU, "1", "p", "1.2",
        1, 1024, (1024, 1024, 1024), 1 << 16, 1 << 30,
    )  # fmt: skip


def test_plan_is_stored_and_read_back(tmp_path):
    spec = builtin("convolution")
    devices = [_device("a"), _device("b")]
    plan = plan_split([d.id for d in devices], 1000, [64, 32], [1.0, 2.0])
    configs = [Config.of(wg=64), Config.of(wg=32)]
    with Store(tmp_path / "r.db") as store:
        first = record_plan(store, spec, spec.problem, devices, configs, plan.to_json())
        record_plan(store, builtin("vector_add"), spec.problem, devices, configs, plan.to_json(),
                    {"measured_ms": 0.7})  # fmt: skip
        got = stored_plans(store, "convolution")
        assert [p.id for p in got] == [first] and len(stored_plans(store)) == 2
    (one,) = got
    assert SplitPlan.from_json(one.plan) == plan and one.run is None
    assert one.devices == tuple(d.fingerprint for d in devices)
    assert one.configs == ({"wg": 64}, {"wg": 32}) and one.problem["mask"] == 17


def test_a_version_1_database_gains_the_table(tmp_path):
    from perfport.store.schema import MIGRATIONS, _statements

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in _statements(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store(path) as store:
        assert store.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION >= 4
        assert stored_plans(store) == []
