"""``perfport serve --workers N``: what the worker processes must agree on goes through one
gate (asked pairs, rate limits) in a manager process, and the store."""

from __future__ import annotations

import multiprocessing

import pytest

from perfport.service.limits import RateLimited, RefusalLimits
from perfport.service.workers import SharedGate, _GateManager, default_workers


@pytest.fixture
def remote():
    manager = _GateManager(ctx=multiprocessing.get_context("fork"))
    manager.start()
    try:
        yield manager.RefusalGate(RefusalLimits(per_device_per_minute=6.0, burst=2))
    finally:
        manager.shutdown()


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
