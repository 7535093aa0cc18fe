"""``perfport serve --workers N``: what the worker processes must agree on goes through one
gate (asked pairs, rate limits) in a manager process, and the store."""

from __future__ import annotations

import multiprocessing

import pytest

from perfport.service.limits import RateLimited, RefusalLimits
from perfport.service.workers import SharedGate, _GateManager, default_workers


@pytest.fixture
def manager():
    manager = _GateManager(ctx=multiprocessing.get_context("fork"))
    manager.start()
    try:
        yield manager
    finally:
        manager.shutdown()


@pytest.fixture
def remote(manager):
    return manager.RefusalGate(RefusalLimits(per_device_per_minute=6.0, burst=2))


def test_workers_share_what_was_asked_and_the_rate_limits(remote):
    limits = RefusalLimits(per_device_per_minute=6.0, burst=2)
    one, two = SharedGate(remote, limits), SharedGate(remote, limits)
    assert not two.was_asked("kernel", "device")
    one.asked("kernel", "device")  # a question answered by one worker ...
    assert two.was_asked("kernel", "device")  # ... makes the refusal plausible in another
    assert not two.was_asked("kernel", "other device")
    one.take("device")
    two.take("device")  # the burst of 2 is spent across both workers
    with pytest.raises(RateLimited) as refused:
        one.take("device")
    assert refused.value.retry_after_s is not None and refused.value.retry_after_s > 0
    one.take("other device")  # another device has its own bucket


def test_default_workers_follow_the_cores():
    assert 1 <= default_workers() <= 8


def test_the_shared_socket_names_tcp_so_answers_are_not_delayed():
    # asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP; without it each
    # answer waited ~40 ms for the client's delayed acknowledgement.
    import socket

    from perfport.service.workers import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP and sock.type == socket.SOCK_STREAM
    finally:
        sock.close()


def test_a_dead_manager_is_a_503_naming_it_and_health_says_so(
    manager, remote, daemon_model, tmp_path
):
    # kill -9 of the manager left every question a 500 with ConnectionRefusedError, while
    # /v1/health still said "ok".
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from perfport.service.app import create_app
    from perfport.service.limits import GateUnavailable

    gate = SharedGate(remote, RefusalLimits())
    assert gate.problem() is None
    manager._process.kill()
    manager._process.join()
    with pytest.raises(GateUnavailable, match="shared-state process"):
        gate.was_asked("kernel", "device")
    client = TestClient(create_app(daemon_model, tmp_path / "d.db", gate=gate))
    health = client.get("/v1/health")
    assert health.status_code == 503 and health.json()["status"] != "ok"
    assert "shared-state process" in health.json()["detail"]
    device = {"name": "GPU", "type": "gpu", "compute_units": 4, "max_work_group_size": 256,
              "max_work_item_sizes": [256, 256, 64], "local_mem_bytes": 49152}  # fmt: skip
    answer = client.post("/v1/wg/predict", json={"kernel": "heat", "device": device})
    assert answer.status_code == 503 and "\n" not in answer.json()["detail"], answer.text
    assert answer.headers["retry-after"]
