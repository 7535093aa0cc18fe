"""The daemon's coalescing: questions waiting together are answered by one call of the model,
with the answers they get one at a time; one question's failure stays its own."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from perfport._core import PerfportError
from perfport.service.batch import Coalescer
from perfport.service.service import WgService

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

DEVICE = {"name": "Client GPU", "type": "gpu", "compute_units": 40, "max_work_group_size": 256,
          "max_work_item_sizes": [256, 256, 64], "local_mem_bytes": 49152, "subgroup_size": 32}  # fmt: skip


def _doubler(calls):
    def work(items):
        calls.append(list(items))
        return [ValueError(f"bad {i}") if i < 0 else 2 * i for i in items]

    return work


def test_waiting_questions_are_one_batch_and_a_lone_one_is_answered_at_once():
    calls: list[list[int]] = []
    coalescer = Coalescer(_doubler(calls))

    async def main():
        alone = await coalescer.ask(5)
        together = await asyncio.gather(*(coalescer.ask(i) for i in range(10)))
        return alone, together

    alone, together = asyncio.run(main())
    assert alone == 10 and together == [2 * i for i in range(10)]
    assert calls == [[5], list(range(10))]
    assert (coalescer.counts.batches, coalescer.counts.questions) == (2, 11)


def test_a_failing_question_fails_alone_and_a_failing_batch_fails_its_askers():
    calls: list[list[int]] = []
    coalescer = Coalescer(_doubler(calls), most=4)

    async def main():
        return await asyncio.gather(*(coalescer.ask(i) for i in (1, -1, 2, 3, 4, -2)),
                                    return_exceptions=True)  # fmt: skip

    got = asyncio.run(main())
    assert got[0] == 2 and got[2:5] == [4, 6, 8]
    assert isinstance(got[1], ValueError) and str(got[5]) == "bad -2"
    assert calls == [[1, -1, 2, 3], [4, -2]]  # at most 4 a batch, the rest at the next turn

    def broken(items):
        raise RuntimeError("the model broke")

    async def ask_broken():
        failing = Coalescer(broken)
        return await asyncio.gather(failing.ask(1), failing.ask(2), return_exceptions=True)

    assert [str(e) for e in asyncio.run(ask_broken())] == ["the model broke"] * 2
    with pytest.raises(ValueError, match="at least one"):
        Coalescer(broken, most=0)


def test_answer_many_answers_as_one_at_a_time_with_a_failure_in_place(daemon_model, tmp_path):
    from perfport.service.schemas import PredictRequest

    rng = np.random.default_rng(5)
    requests = []
    for i in range(20):
        problem = {"width": int(rng.integers(16, 5000)), "height": int(rng.integers(16, 5000))}
        requests.append(PredictRequest.model_validate(
            {"kernel": ["heat", "gaussian", "sobel"][i % 3], "problem": problem, "device": DEVICE}
        ))  # fmt: skip
    requests.append(requests[3])  # asked twice in one batch: remembered, as one after the other
    batched = WgService(daemon_model, tmp_path / "a.db")
    alone = WgService(daemon_model, tmp_path / "b.db")

    def question(service, request, refused=frozenset()):
        key = request.model_dump_json()
        found = service.scenario(key, request.kernel_given(), request.problem, request.device)
        return key, found, refused

    every_size = frozenset((int(c), int(r)) for c, r in batched.model.sizes)
    questions = [question(batched, r) for r in requests]
    questions.insert(7, question(batched, requests[0], every_size))
    answers = batched.answer_many(questions)
    assert isinstance(answers[7], PerfportError)
    assert "none of the model's sizes" in str(answers[7])
    with pytest.raises(PerfportError, match="none of the model's sizes"):
        alone.answer(*question(alone, requests[0], every_size))
    del answers[7]
    for request, answer in zip(requests, answers, strict=True):
        expected = alone.answer(*question(alone, request))
        assert not isinstance(answer, Exception)
        got, want = answer.prediction.to_json(), expected.prediction.to_json()
        assert {**got, "predict_ms": 0} == {**want, "predict_ms": 0}
        assert answer.cached == expected.cached
    assert answers[-1].cached and not answers[3].cached


def test_the_daemon_coalesces_concurrent_questions(daemon_model, tmp_path):
    from perfport.service.app import create_app

    app = create_app(daemon_model, tmp_path / "daemon.db")
    kernels = ("heat", "gaussian", "sobel")

    async def main():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://daemon") as client:
            for kernel in kernels:  # compiled once each, before the questions come together
                ask = {"kernel": kernel, "problem": {"width": 64, "height": 64}, "device": DEVICE}
                assert (await client.post("/v1/wg/predict", json=ask)).status_code == 200
            asks = [{"kernel": kernels[i % 3], "problem": {"width": 100 + i, "height": 77},
                     "device": DEVICE} for i in range(24)]  # fmt: skip
            asks.insert(4, {"kernel": "heat", "problem": {"widht": 3}, "device": DEVICE})
            replies = await asyncio.gather(*(client.post("/v1/wg/predict", json=a) for a in asks))
            health = (await client.get("/v1/health")).json()
            return asks, replies, health

    asks, replies, health = asyncio.run(main())
    assert replies[4].status_code == 400 and "widht" in replies[4].json()["detail"]
    assert all(r.status_code == 200 for i, r in enumerate(replies) if i != 4)
    counts = health["batches"]
    assert counts["questions"] == 3 + 24 and counts["batches"] < counts["questions"]
    alone = WgService(daemon_model, tmp_path / "other.db")
    for ask, reply in zip(asks, replies, strict=True):
        if "widht" in ask["problem"]:
            continue
        from perfport.service.schemas import PredictRequest

        request = PredictRequest.model_validate(ask)
        expected = alone.predict(request.model_dump_json(), request.kernel_given(),
                                 request.problem, request.device)  # fmt: skip
        assert reply.json()["wg"] == list(expected.prediction.wg)
        assert reply.json()["novelty"] == expected.prediction.novelty.to_json()


def _raw(app, body, headers, chunks=1):
    """Status, headers and body of one POST /v1/wg/predict sent straight to an ASGI app."""
    from perfport.service.fast_path import PATH

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": PATH, "raw_path": PATH.encode(),
             "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8765)}  # fmt: skip
    step = max(1, -(-len(body) // chunks))
    parts = [body[i : i + step] for i in range(0, len(body), step)] or [b""]
    messages = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1}
                for i, p in enumerate(parts)]  # fmt: skip
    sent = []

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = sent[0]
    return (start["status"], {k.lower(): v for k, v in start["headers"]},
            b"".join(m.get("body", b"") for m in sent[1:]))  # fmt: skip


def test_the_fast_path_answers_as_the_framework_does(daemon_model, tmp_path, monkeypatch):
    """Well-formed questions and their errors answered without the framework, byte for byte
    as the FastAPI route answers them; everything else is the framework's."""
    from perfport.service import fast_path
    from perfport.service.app import create_app

    app = create_app(daemon_model, tmp_path / "daemon.db", max_body_bytes=4096)
    taken = []
    answer = app._answer

    async def counted(request, send):
        taken.append(request)
        await answer(request, send)

    monkeypatch.setattr(app, "_answer", counted)
    ok = json.dumps({"kernel": "heat", "problem": {"width": 300, "height": 200}, "device": DEVICE})
    bad_problem = json.dumps({"kernel": "heat", "problem": {"widht": 3}, "device": DEVICE})
    malformed = json.dumps({"kernel": "heat", "device": {**DEVICE, "compute_units": -1}})
    cases = [(ok.encode(), "application/json", 1), (ok.encode(), "application/json", 3),
             (bad_problem.encode(), "application/json", 1), (malformed.encode(), "application/json", 1),
             (b"{not json", "application/json", 1), (ok.encode(), "text/plain", 1),
             (b" " * 5000, "application/json", 1)]  # fmt: skip
    for body, kind, chunks in cases:
        headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
        taken.clear()
        fast = _raw(app, body, headers, chunks)
        framework = _raw(app.app, body, headers, chunks)
        if fast[0] == 200:  # answered once by each: the second is remembered
            got, want = json.loads(fast[2]), json.loads(framework[2])
            assert {**got, "predict_ms": 0, "cached": 0} == {**want, "predict_ms": 0, "cached": 0}
        else:
            assert fast == framework
        assert fast[0] != 413 or body.startswith(b" ")
        served = kind == "application/json" and body in (ok.encode(), bad_problem.encode())
        assert bool(taken) == served, (body[:40], kind)
    assert fast_path.PATH == "/v1/wg/predict"
