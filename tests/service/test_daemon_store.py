"""The daemon's database as the daemon meets it over its life: replaced, locked, full."""

import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from perfport.service.app import create_app

DEVICE = {"name": "Client GPU", "type": "gpu", "compute_units": 40, "max_work_group_size": 256,
          "max_work_item_sizes": [256, 256, 64], "local_mem_bytes": 49152}  # fmt: skip
REQUEST = {"kernel": "sobel", "problem": {"width": 2048, "height": 2048}, "device": DEVICE}


def _replace(db, by):
    """Put ``by`` in place of ``db`` as an operator restores a backup: old WAL files gone."""
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    by.replace(db)


def test_refusals_count_after_the_database_is_replaced(daemon_model, tmp_path):
    # Readers kept the connections they opened, on the unlinked old file: refusals stored
    # into the restored file were acknowledged but never changed an answer.
    db = tmp_path / "daemon.db"
    client = TestClient(create_app(daemon_model, db), raise_server_exceptions=False)
    first = client.post("/v1/wg/predict", json=REQUEST).json()["wg"]
    assert client.post("/v1/wg/refused", json={**REQUEST, "wg": first}).status_code == 200
    second = client.post("/v1/wg/predict", json=REQUEST).json()
    assert second["refused_known"] == 1
    backup = tmp_path / "backup.db"
    with sqlite3.connect(db) as source, sqlite3.connect(backup) as copy:
        source.backup(copy)
    _replace(db, backup)
    told = client.post("/v1/wg/refused", json={**REQUEST, "wg": second["wg"]})
    assert told.status_code == 200 and told.json()["stored"] is True
    third = client.post("/v1/wg/predict", json=REQUEST).json()
    assert third["refused_known"] == 2 and third["wg"] not in (first, second["wg"]), third
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database" * 100)
    _replace(db, garbage)
    answer = client.post("/v1/wg/predict", json=REQUEST)
    assert answer.status_code == 503 and "daemon.db" in answer.json()["detail"], answer.text


def test_a_clients_refusals_never_steer_a_local_device_alike(daemon_model, tmp_path, cpu):
    # A client describing a device with this machine's properties shared its row: its
    # refusals steered 'perfport wg predict --db' for the local device.
    from dataclasses import replace

    from perfport import builtin
    from perfport.wg import refused_sizes

    db = tmp_path / "daemon.db"
    alike = {k: v for k, v in cpu.to_json().items() if k not in ("id", "fingerprint")}
    request = {"kernel": "sobel", "problem": {"width": 256, "height": 256}, "device": alike}
    client = TestClient(create_app(daemon_model, db))
    wg = client.post("/v1/wg/predict", json=request).json()["wg"]
    assert client.post("/v1/wg/refused", json={**request, "wg": wg}).json()["stored"] is True
    assert client.post("/v1/wg/predict", json=request).json()["refused_known"] == 1
    spec = builtin("sobel")
    assert refused_sizes(db, spec, cpu) == set()
    described = replace(cpu, id=f"client:{cpu.name}")
    assert described.fingerprint != cpu.fingerprint
    assert refused_sizes(db, spec, described) == {tuple(wg)}


def test_refusals_an_older_daemon_stored_under_a_local_device_do_not_steer_it(tmp_path, cpu):
    # Older daemons stored them under the local fingerprint: local predictions skip them, and
    # still count the local device's own refused launches.
    from perfport import Measurement, Outcome, builtin
    from perfport._core import Config
    from perfport.space import PruningReport
    from perfport.store import Store
    from perfport.wg import refused_sizes

    db, spec = tmp_path / "old.db", builtin("sobel")
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(spec.problem))
        for strategy, wg in (("reported", (32, 8)), ("random", (16, 16))):
            campaign = store.open_campaign(strategy, ids, strategy, 0, {}, PruningReport(0, 0, ()))
            config = Config.of(wc=wg[0], wr=wg[1])
            store.record(campaign, Measurement(config, Outcome.LAUNCH_REFUSED, "x"))
    assert refused_sizes(db, spec, cpu) == {(16, 16)}


def test_a_refusal_meeting_a_held_write_lock_is_a_503_after_a_bounded_wait(
    daemon_model, tmp_path, monkeypatch, capfd
):
    # It waited for as long as another process held the lock, printing the CLI's
    # "waiting for it (Ctrl-C to stop)" into the server's log.
    import time

    import perfport.service.service as service_module
    from perfport.store import Store

    monkeypatch.setattr(service_module, "LOCK_WAIT_S", 0.5)
    db = tmp_path / "daemon.db"
    Store(db).close()
    client = TestClient(create_app(daemon_model, db))
    wg = client.post("/v1/wg/predict", json=REQUEST).json()["wg"]
    for fresh in (True, False):  # the daemon's write connection opened under the lock, or before
        holder = sqlite3.connect(db, timeout=1, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        told = client.post("/v1/wg/refused", json={**REQUEST, "wg": wg})
        holder.execute("ROLLBACK")
        holder.close()
        assert told.status_code == 503 and told.headers["retry-after"], (fresh, told.text)
        assert "locked by another process" in told.json()["detail"]
        assert time.monotonic() - started < 10
        assert client.post("/v1/wg/refused", json={**REQUEST, "wg": wg}).status_code == 200
        wg = client.post("/v1/wg/predict", json=REQUEST).json()["wg"]
    assert "Ctrl-C" not in capfd.readouterr().err


# What docs/wg.md gives the operator to remove client refusals older than 30 days.
REMOVE_OLD = (
    "DELETE FROM results WHERE campaign_id IN (SELECT id FROM campaigns WHERE strategy = "
    "'reported') AND created < strftime('%s', 'now') - 30 * 86400"
)


def test_a_full_database_says_what_the_operator_does_and_removing_old_refusals_works(
    daemon_model, tmp_path
):
    # It was a 429 'remove old ones' with Retry-After 60: retrying never helped, and no
    # command removed them.
    from perfport.service.limits import RefusalLimits

    db = tmp_path / "daemon.db"
    limits = RefusalLimits(per_minute=10_000, burst=100, total=1)
    client = TestClient(create_app(daemon_model, db, refusal_limits=limits))
    wg = client.post("/v1/wg/predict", json=REQUEST).json()["wg"]
    assert client.post("/v1/wg/refused", json={**REQUEST, "wg": wg}).status_code == 200
    wg = client.post("/v1/wg/predict", json=REQUEST).json()["wg"]
    full = client.post("/v1/wg/refused", json={**REQUEST, "wg": wg})
    assert full.status_code == 507 and "retry-after" not in full.headers
    assert "operator must remove old ones" in full.json()["detail"]
    assert REMOVE_OLD in (Path(__file__).parents[2] / "docs" / "wg.md").read_text()
    with sqlite3.connect(db) as conn:
        conn.execute(REMOVE_OLD.replace("- 30 * 86400", "+ 1"))  # every one: they are new
    assert client.post("/v1/wg/refused", json={**REQUEST, "wg": wg}).status_code == 200
