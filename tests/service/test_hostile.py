"""The daemon facing clients that are not friendly: tokens, refusal limits, client source that
tries to read files, bodies that once crashed it, and the store read without a write lock."""

import json
import socket
import sqlite3
import time

import pytest

from conftest import BOX_STENCIL
from perfport._core import SpecError
from perfport.kernels.client_source import check_client_source, first_error_line
from perfport.store import Store

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from perfport.service.app import create_app, is_loopback
from perfport.service.limits import RefusalLimits
from perfport.service.service import WgService

DEVICE = {"name": "Client GPU", "type": "gpu", "compute_units": 40, "max_work_group_size": 256,
          "max_work_item_sizes": [256, 256, 64], "local_mem_bytes": 49152, "subgroup_size": 32}  # fmt: skip
ASK = {"kernel": "sobel", "problem": {"width": 1024, "height": 1024}, "device": DEVICE}
TOKEN = "t0k3n-for-the-tests-only"


@pytest.fixture
def model(daemon_model):
    return daemon_model


def client_of(model, db, **kwargs):
    return TestClient(create_app(model, db, **kwargs), raise_server_exceptions=False)


def test_writes_need_the_token_and_questions_do_not(model, tmp_path):
    client = client_of(model, tmp_path / "d.db", token=TOKEN)
    wg = client.post("/v1/wg/predict", json=ASK).json()["wg"]  # no token needed to ask
    refusal = {**ASK, "wg": wg}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        answer = client.post("/v1/wg/refused", json=refusal, headers=headers)
        assert answer.status_code == 401 and "token" in answer.json()["detail"]
    assert not (tmp_path / "d.db").exists()
    answer = client.post(
        "/v1/wg/refused", json=refusal, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert answer.status_code == 200 and answer.json()["stored"] is True


def test_serving_off_loopback_warns_and_generates_a_token(model, tmp_path, monkeypatch, capsys):
    import uvicorn

    from perfport.service import app as app_module
    from perfport.service import workers

    served = {}

    class Server:  # uvicorn's, faked: nothing is bound or served
        def __init__(self, config):
            served["app"] = config.app

        def run(self, sockets):
            served["sockets"] = sockets

    class Bound:  # the fake bind's socket: the address it was asked for
        def __init__(self, host, port):
            self.address = (host, port)

        def getsockname(self):
            return self.address

    monkeypatch.setattr(uvicorn, "Server", Server)
    monkeypatch.setattr(workers, "bind", Bound)
    app_module.serve(model, tmp_path / "d.db", host="192.0.2.1", port=9)
    assert [s.address for s in served["sockets"]] == [("192.0.2.1", 9)]
    err = capsys.readouterr().err
    assert "warning: binding 192.0.2.1, not loopback" in err
    token = err.split("Authorization: Bearer ")[1].split("'")[0]
    client = TestClient(served["app"], raise_server_exceptions=False)
    wg = client.post("/v1/wg/predict", json=ASK).json()["wg"]
    assert client.post("/v1/wg/refused", json={**ASK, "wg": wg}).status_code == 401
    told = client.post(
        "/v1/wg/refused", json={**ASK, "wg": wg}, headers={"Authorization": f"Bearer {token}"}
    )
    assert told.status_code == 200
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


def test_a_refusal_counts_only_when_plausible(model, tmp_path):
    client = client_of(model, tmp_path / "d.db")
    # Never asked about: no launcher that uses this daemon met it.
    unasked = client.post("/v1/wg/refused", json={**ASK, "wg": [32, 8]})
    assert unasked.status_code == 422 and "POST /v1/wg/predict first" in unasked.json()["detail"]
    client.post("/v1/wg/predict", json=ASK)
    # A size over the device's limits (256 work-items) cannot have been launched.
    beyond = client.post("/v1/wg/refused", json={**ASK, "wg": [1024, 1]})
    assert beyond.status_code == 422 and "limits allow" in beyond.json()["detail"]
    assert not (tmp_path / "d.db").exists()
    assert client.post("/v1/wg/refused", json={**ASK, "wg": [32, 8]}).status_code == 200


def test_refusals_are_rate_and_size_limited(model, tmp_path):
    limits = RefusalLimits(per_device_per_minute=6, burst=3, per_kernel_and_device=2)
    client = client_of(model, tmp_path / "d.db", refusal_limits=limits)
    assert client.post("/v1/wg/predict", json=ASK).status_code == 200
    codes = [client.post("/v1/wg/refused", json={**ASK, "wg": wg}).status_code
             for wg in ([32, 8], [16, 16], [8, 8], [8, 4])]  # fmt: skip
    assert codes == [200, 200, 409, 429]  # two kept for this kernel and device, then the rate
    answer = client.post("/v1/wg/refused", json={**ASK, "wg": [4, 4]})
    assert answer.status_code == 429 and int(answer.headers["Retry-After"]) >= 1
    assert client.post("/v1/wg/predict", json=ASK).json()["refused_known"] == 2


def test_a_kernels_full_refusals_answer_409_without_retry_after(model, tmp_path):
    # It was a 429 with Retry-After 60, though retrying never stores it: nothing ages the
    # stored refusals out.
    limits = RefusalLimits(per_kernel_and_device=1)
    client = client_of(model, tmp_path / "d.db", refusal_limits=limits)
    assert client.post("/v1/wg/predict", json=ASK).status_code == 200
    assert client.post("/v1/wg/refused", json={**ASK, "wg": [32, 8]}).status_code == 200
    full = client.post("/v1/wg/refused", json={**ASK, "wg": [16, 16]})
    assert full.status_code == 409 and "retry-after" not in full.headers, full.text
    detail = full.json()["detail"]
    assert "retrying will not store it" in detail and "stop reporting" in detail
    assert "\n" not in detail
    assert client.post("/v1/wg/predict", json=ASK).json()["refused_known"] == 1


def test_junk_refusals_cannot_grow_the_database_without_bound(model, tmp_path):
    db = tmp_path / "d.db"
    limits = RefusalLimits(per_minute=10_000, burst=100, total=5)
    client = client_of(model, db, refusal_limits=limits)
    stored = 0
    for n in range(40):  # a made-up device each time, as in the report
        ask = {**ASK, "device": {**DEVICE, "name": f"made-up {n}"}}
        wg = client.post("/v1/wg/predict", json=ask).json()["wg"]
        answer = client.post("/v1/wg/refused", json={**ask, "wg": wg})
        assert answer.status_code in (200, 507), answer.text
        stored += answer.status_code == 200
    assert stored == 5 and "--max-refusals" in answer.json()["detail"]
    assert "retry-after" not in answer.headers  # retrying would not help
    with Store(db) as store:
        assert store.query("SELECT count(*) FROM results")[0][0] == 5


@pytest.mark.parametrize(
    "body",
    [
        '#include "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        "  #  include </etc/hostname>\nreturn (OUT)GET(0, 0);",
        '%:include "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        '??=include "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        '#\\\ninclude "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        '#import "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        '#line 1 "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        "#pragma clang module import x\nreturn (OUT)GET(0, 0);",
        '#embed "/etc/hostname"\nreturn (OUT)GET(0, 0);',
        '_Pragma("once") return (OUT)GET(0, 0);',
        "const char* f = __FILE__; return (OUT)GET(0, 0);",
        "const char* f = __FI\\\nLE__; return (OUT)GET(0, 0);",
        "const char* f = __builtin_FILE(); return (OUT)GET(0, 0);",
        '__asm__(".incbin \\"/etc/hostname\\""); return (OUT)GET(0, 0);',
        'asm(".incbin \\"/etc/hostname\\""); return (OUT)GET(0, 0);',
    ],
)
def test_client_source_that_reaches_files_is_refused(model, tmp_path, body):
    hostname = socket.gethostname()
    client = client_of(model, tmp_path / "d.db")
    kernel = {**BOX_STENCIL, "body": body}
    answer = client.post("/v1/wg/predict", json={**ASK, "kernel": kernel})
    assert answer.status_code == 400, answer.text
    assert "not accepted in a kernel sent to the daemon" in answer.json()["detail"]
    assert hostname not in answer.text
    with pytest.raises(SpecError):
        check_client_source(body)


def test_plain_c_is_accepted_and_a_build_error_shows_one_line(model, tmp_path):
    check_client_source(BOX_STENCIL["body"])
    check_client_source("ELEM a = GET(0, 0) % 3; return (OUT)(a ? a : 1);")  # % and ?: are C
    client = client_of(model, tmp_path / "d.db")
    bad = {**BOX_STENCIL, "body": "ELEM s = GET(0, 0);\nreturn nonsense(s);\nreturn (OUT)q;"}
    answer = client.post("/v1/wg/predict", json={**ASK, "kernel": bad})
    detail = answer.json()["detail"]
    assert answer.status_code == 400 and "does not compile" in detail and "nonsense" in detail
    assert "\n" not in detail and "/tmp" not in detail and len(detail) < 400
    log = "/tmp/pocl/x.cl:3:9: error: use of undeclared 'q'\n  3 | SECRET LINE\n1 error generated."
    assert first_error_line(log) == "3:9: error: use of undeclared 'q'"


RAW_BODIES = [
    json.dumps({**ASK, "device": {**DEVICE, "compute_units": 2**64 + 1}}),
    json.dumps({**ASK, "device": {**DEVICE, "max_work_item_sizes": [2**70, 1, 1]}}),
    json.dumps({**ASK, "problem": {"width": 2**64 + 1}}),
    json.dumps({**ASK, "device": {**DEVICE, "name": "lone \ud800 surrogate"}}),
    json.dumps({**ASK, "problem": {"dtype": "\udfff"}}),
    json.dumps({**ASK, "problem": {"\ud800": 1}}),
    json.dumps({**ASK, "kernel": "\ud800"}),
    json.dumps({**ASK, "kernel": {**BOX_STENCIL, "name": "x\ud800"}}),
    json.dumps({**ASK, "device": {**DEVICE, "name": "n" * 100_000}}),
    json.dumps({**ASK, "problem": {f"p{n}": n for n in range(1000)}}),
    json.dumps({**ASK, "problem": {"width": float("nan")}}),
    '{"kernel": ' + "[" * 20_000 + "]" * 20_000 + "}",
    b'{"kernel": "\xff\xfe"}',
    "not json at all",
    json.dumps([ASK]),
    json.dumps({**ASK, "kernel": {**BOX_STENCIL, "north": True}}),
    json.dumps({**ASK, "device": {**DEVICE, "subgroup_size": -1}}),
]


@pytest.mark.parametrize("raw", RAW_BODIES)
def test_malformed_bodies_get_a_4xx_that_does_not_echo_them(model, tmp_path, raw):
    client = client_of(model, tmp_path / "d.db")
    for path in ("/v1/wg/predict", "/v1/wg/refused"):
        content = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
        answer = client.post(path, content=content, headers={"content-type": "application/json"})
        assert 400 <= answer.status_code < 500, (path, answer.status_code, answer.text[:300])
        assert isinstance(answer.json()["detail"], str) and len(answer.text) < 1000
    assert not (tmp_path / "d.db").exists()


def test_a_streamed_body_over_the_limit_is_refused_unread(model, tmp_path):
    client = client_of(model, tmp_path / "d.db", max_body_bytes=10_000)

    def chunks():
        for _ in range(100):
            yield b" " * 1000

    answer = client.post(
        "/v1/wg/predict", content=chunks(), headers={"content-type": "application/json"}
    )
    assert answer.status_code == 413 and "over 10000 bytes" in answer.json()["detail"]


def test_caches_keep_digests_not_requests(model, tmp_path):
    service = WgService(model, tmp_path / "d.db")

    class Device:
        def info(self):
            from perfport.service.schemas import Device as Schema

            return Schema(**DEVICE).info()

    for n in range(3):
        service.predict("k" * 100_000 + str(n), "sobel", {"width": 512 + n}, Device())
    assert all(len(key) == 16 for key in service._scenarios)
    assert all(len(key) == 16 for key, _ in service._answers)


def test_questions_do_not_wait_for_a_writer(model, tmp_path):
    db = tmp_path / "d.db"
    client = client_of(model, db)
    wg = client.post("/v1/wg/predict", json=ASK).json()["wg"]
    assert client.post("/v1/wg/refused", json={**ASK, "wg": wg}).status_code == 200
    fresh = client_of(model, db)  # opens its reader while another process writes
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE campaigns SET updated = updated + 1")
    try:
        started = time.monotonic()
        answer = fresh.post("/v1/wg/predict", json=ASK)
        waited = time.monotonic() - started
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert answer.status_code == 200 and answer.json()["refused_known"] == 1
    assert waited < 4.0  # a write lock would have held it for the store's 30 s timeout


def _damage(db, table: str) -> None:
    """Overwrite the cell pointers of ``table``'s first page, after folding the WAL in."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        root = root.fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * page + 8)
        f.write(b"\xff" * 64)


def test_refusals_reuse_one_checked_connection_until_the_file_changes(model, tmp_path, monkeypatch):
    import perfport.store.store as store_module

    checks = []
    real = store_module.quick_check
    monkeypatch.setattr(store_module, "quick_check", lambda *a: checks.append(1) or real(*a))
    db = tmp_path / "d.db"
    client = client_of(model, db, refusal_limits=RefusalLimits(burst=100))
    assert client.post("/v1/wg/predict", json=ASK).status_code == 200
    for wg in ([32, 8], [16, 16], [8, 8]):
        assert client.post("/v1/wg/refused", json={**ASK, "wg": wg}).status_code == 200
    assert len(checks) == 1  # one open, one check: not one per refusal
    with Store(db) as store:  # another writer: the daemon's next write checks the file again
        store.set_status(store.campaign(store.query("SELECT key FROM campaigns")[0][0]),
                         store_module.CampaignStatus.COMPLETE)  # fmt: skip
    checks.clear()
    assert client.post("/v1/wg/refused", json={**ASK, "wg": [8, 4]}).status_code == 200
    assert len(checks) == 1
    _damage(db, "results")  # damage from outside the daemon: still refused, never written
    before = db.read_bytes()
    answer = client.post("/v1/wg/refused", json={**ASK, "wg": [4, 4]})
    assert answer.status_code == 503 and ".recover" in answer.json()["detail"], answer.text
    # A question already answered may come from the refusals kept in memory (the damage is no
    # commit, so nothing says they changed); one that reads the file gets the 503, never a 500.
    assert client.post("/v1/wg/predict", json=ASK).status_code in (200, 503)
    assert db.read_bytes() == before


def test_a_body_that_is_not_json_says_where(model, tmp_path):
    # It answered "18: JSON decode error", as if 18 were a field.
    client = client_of(model, tmp_path / "d.db")
    answer = client.post("/v1/wg/predict", content=b'{"kernel":"sobel",',
                         headers={"content-type": "application/json"})  # fmt: skip
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert detail.startswith("body: not valid JSON at character 18") and "JSON object" in detail
