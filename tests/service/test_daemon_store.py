"""The daemon's database as the daemon meets it over its life: replaced, locked, full."""

import sqlite3

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
