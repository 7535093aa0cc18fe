"""The work-group-size prediction daemon's HTTP adapter (FastAPI; pip install 'perfport[serve]').

A kernel launcher asks ``POST /v1/wg/predict`` for a work-group size, sending the kernel (a
built-in stencil's name, or its own stencil described as ``perfport.kernels.described_stencil``
reads it: name, C body, border sizes), its problem and the device's properties; the daemon
extracts the features (compiling the kernel with PoCL in a separate, limited process, once per
kernel) and answers. A launch the driver refused is reported to ``POST /v1/wg/refused`` and
stored, so that size is never proposed again for that kernel and device; writes need the
daemon's token when it has one. ``GET /v1/health`` says it is up. Malformed requests get a 4xx
with the reason, never a 500. The work is ``WgService``'s; routes only turn requests into its
calls and its answers into JSON, and keep everything that can block off the event loop.
"""

# No `from __future__ import annotations` here: FastAPI reads the routes' annotations at run
# time, and the request models they name are imported inside create_app (pydantic is optional).
import hmac
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perfport._core import MissingExtra, PerfportError, StoreError
from perfport._core.optional import require
from perfport._core.version import __version__
from perfport.service.batch import Coalescer
from perfport.service.compiler import CompileLimits, ServiceBusy, probe_features
from perfport.service.fast_path import FastPredict
from perfport.service.limits import (
    GateUnavailable,
    Implausible,
    KernelRefusalsFull,
    RateLimited,
    RefusalGate,
    RefusalLimits,
    RefusalsFull,
)
from perfport.service.service import WgService, compiles_kernels
from perfport.wg import WgModel, load_model

_EXTRA, _PURPOSE = "serve", "The prediction daemon"
DETAIL_CHARS = 600  # an error answer names the problem; it never quotes a whole request


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    from perfport.service.schemas import ErrorBody

    return {code: {"model": ErrorBody} for code in codes}


def create_app(
    model: WgModel | str | Path,
    db: str | Path = "perfport.db",
    *,
    token: str | None = None,
    compile_limits: CompileLimits | None = None,
    refusal_limits: RefusalLimits | None = None,
    max_body_bytes: int | None = None,
    gate: RefusalGate | None = None,
    write_lock: Any = None,
) -> Any:
    """The daemon's ASGI app. With ``token``, ``POST /v1/wg/refused`` needs the header
    ``Authorization: Bearer TOKEN``; questions never do. ``gate`` and ``write_lock``: shared
    by the processes of one daemon (``WgService``)."""
    fastapi = require("fastapi", _EXTRA, _PURPOSE)
    require("pydantic", _EXTRA, _PURPOSE)
    from anyio import CapacityLimiter, to_thread

    from perfport.service.body_limit import BodyLimit
    from perfport.service.schemas import MAX_BODY_BYTES, PredictRequest, RefusedRequest

    service = WgService(model, db, compile_limits=compile_limits, refusal_limits=refusal_limits,
                        gate=gate, write_lock=write_lock)  # fmt: skip
    service.compiler.start()
    app = fastapi.FastAPI(title="perfport", version=__version__)
    app.add_middleware(BodyLimit, limit=max_body_bytes or MAX_BODY_BYTES)
    _add_error_handlers(app, fastapi)
    # Separate thread budgets: builds waiting for a compile slot, or writers waiting for the
    # database's write lock, never hold the threads that reads need.
    builds, reads, writes = CapacityLimiter(8), CapacityLimiter(16), CapacityLimiter(2)
    # Questions prepared while others wait are answered by one call of the model.
    answers = Coalescer(service.answer_many)

    # HEAD too: load balancers and uptime probes often ask that way.
    @app.api_route("/v1/health", methods=["GET", "HEAD"], responses=_errors(503))
    async def health() -> Any:
        return _health(service, answers)

    # The answer itself runs on the event loop, the questions waiting together in one batch
    # (``Coalescer``: less than a hop to a worker thread and back for each); compiling and
    # reading the store, which can wait, do not.
    # Answers are encoded here, straight to bytes: FastAPI's own path (jsonable_encoder, then
    # validation against the response type) costs more than the answer; the schema stays.
    async def ask(request: PredictRequest) -> dict[str, Any]:
        key = request.model_dump_json()
        found = service.scenario(key, request.kernel_given(), request.problem, request.device)
        if not service.compiled(found):
            await to_thread.run_sync(service.prepare, found, limiter=builds)
        refused = service.refused_known(found)
        if refused is None:
            refused = await to_thread.run_sync(service.refused, found, limiter=reads)
        answer = await answers.ask((key, found, refused))
        return {**answer.prediction.to_json(), "cached": answer.cached}

    # Well-formed questions are answered by ``FastPredict`` (below) before they reach this
    # route, which answers the rest and keeps the route in the published schema.
    @app.post(
        "/v1/wg/predict", response_model=dict[str, Any], responses=_errors(400, 413, 422, 503)
    )
    async def predict(request: PredictRequest) -> Any:
        return _json(await ask(request))

    def record(request: RefusedRequest) -> dict[str, Any]:
        stored = service.record_refused(request.model_dump_json(), request.kernel_given(),
                                        request.problem, request.device, request.wg,
                                        request.message)  # fmt: skip
        return {"stored": stored.stored, "wg": list(stored.wg)}

    @app.post(
        "/v1/wg/refused",
        responses=_errors(400, 401, 409, 413, 422, 429, 503, 507),
        dependencies=[] if token is None else [fastapi.Depends(_bearer(fastapi, token))],
    )
    async def refused(request: RefusedRequest) -> dict[str, Any]:
        return await to_thread.run_sync(record, request, limiter=writes)

    limit = max_body_bytes or MAX_BODY_BYTES
    return FastPredict(app, PredictRequest.model_validate, ask, _error_answer, limit)


def _health(service: WgService, answers: Coalescer[Any, Any]) -> Any:
    counts = answers.counts
    content = {"status": "ok", "version": __version__, "method": service.model.method,
               "trained_on": service.model.scenarios,
               "batches": {"batches": counts.batches, "questions": counts.questions}}  # fmt: skip
    # A probe must see what questions would meet: a worker whose shared state is gone
    # answers none of them.
    why = service.gate.problem() or service.unavailable()
    if why is None:
        return content
    return _json({**content, "status": "unavailable", "detail": _clean(why)}, 503)


def _json(content: dict[str, Any], status: int = 200) -> Any:
    responses = require("fastapi.responses", _EXTRA, _PURPOSE)
    body = json.dumps(content, separators=(",", ":"), allow_nan=False).encode()
    return responses.Response(body, status_code=status, media_type="application/json")


def _bearer(fastapi: Any, token: str) -> Any:
    security = require("fastapi.security", _EXTRA, _PURPOSE)
    scheme = security.HTTPBearer(auto_error=False, description="the token 'perfport serve' printed")
    expected = token.encode()
    credentials_of = fastapi.Security(scheme)

    def check(credentials: Any = credentials_of) -> None:
        given = b"" if credentials is None else credentials.credentials.encode("utf-8", "replace")
        if not hmac.compare_digest(given, expected):
            raise fastapi.HTTPException(
                status_code=401,
                detail="this daemon needs its token for writes: send 'Authorization: Bearer "
                "TOKEN' with the token 'perfport serve' printed (or was given)",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return check


def _clean(text: str) -> str:
    # Error text can quote a client's strings (a name): keep it encodable and short.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")[:DETAIL_CHARS]


def _error(exc: PerfportError) -> tuple[int, str, float | None]:
    """A PerfportError's answer: (status, text, Retry-After seconds or None)."""
    if isinstance(exc, RateLimited):
        return 429, str(exc), exc.retry_after_s or 60.0
    if isinstance(exc, KernelRefusalsFull):  # Conflict: this pair's stored refusals are full
        return 409, str(exc), None
    if isinstance(exc, RefusalsFull):  # Insufficient Storage: the operator's, not a retry's
        return 507, str(exc), None
    if isinstance(exc, ServiceBusy | GateUnavailable):
        return 503, str(exc), 5.0
    if isinstance(exc, StoreError | MissingExtra):  # the daemon's database or installation
        return 503, str(exc), None
    return (422 if isinstance(exc, Implausible) else 400), str(exc), None


def _retry_after(seconds: float) -> str:
    return str(max(1, round(seconds)))


def _error_answer(exc: PerfportError) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    """``_error`` as the fast path writes it: the same body and headers as the handler's."""
    status, text, retry_after = _error(exc)
    body = json.dumps({"detail": _clean(text)}, ensure_ascii=False, allow_nan=False,
                      indent=None, separators=(",", ":")).encode()  # fmt: skip
    extra = [] if retry_after is None else [(b"retry-after", _retry_after(retry_after).encode())]
    return status, body, extra


def _add_error_handlers(app: Any, fastapi: Any) -> None:
    responses = require("fastapi.responses", _EXTRA, _PURPOSE)

    def answer(status: int, text: str, retry_after: float | None = None) -> Any:
        headers = None if retry_after is None else {"Retry-After": _retry_after(retry_after)}
        return responses.JSONResponse(
            status_code=status, content={"detail": _clean(text)}, headers=headers
        )

    @app.exception_handler(PerfportError)
    async def bad_request(_: Any, exc: PerfportError) -> Any:
        return answer(*_error(exc))

    @app.exception_handler(fastapi.exceptions.RequestValidationError)
    async def malformed(request: Any, exc: Any) -> Any:
        # FastAPI's own answer echoes the whole input back (megabytes for a big body) and fails
        # on a number JSON cannot hold (1e400 parses as infinity): name the fields instead.
        given = request.headers.get("content-type", "")
        if not _is_json(given):  # the body was never parsed: "not a dictionary"
            return answer(422, f"body: send it as JSON with 'Content-Type: application/json' "
                               f"(got {given[:60] or 'none'!r})")  # fmt: skip
        return answer(422, "; ".join(field_errors(exc.errors())[:5]))

    default = require("fastapi.exception_handlers", _EXTRA, _PURPOSE).http_exception_handler

    # FastAPI raises Starlette's HTTPException for a body it cannot parse (not its own).
    @app.exception_handler(require("starlette.exceptions", _EXTRA, _PURPOSE).HTTPException)
    async def unparsed(request: Any, exc: Any) -> Any:
        # FastAPI answers a body its JSON parser gave up on (nesting past Python's recursion
        # limit, bytes that are not UTF-8) with "There was an error parsing the body": say
        # what is wrong with it.
        cause = exc.__cause__
        if exc.status_code == 400 and isinstance(cause, UnicodeDecodeError):
            return answer(400, f"body: not valid UTF-8 (at byte offset {cause.start}); send JSON "
                               "encoded as UTF-8")  # fmt: skip
        if exc.status_code != 400 or not isinstance(cause, RecursionError):
            return await default(request, exc)
        return answer(400, "body: nested too deeply to parse as JSON; send one JSON object of "
                           "the request's fields")  # fmt: skip


def _is_json(content_type: str) -> bool:
    """Whether FastAPI parses a body of this Content-Type as JSON (application/json, +json)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


# Errors of a union branch that only says the value is not of the branch's type.
_WRONG_TYPE = {"string_type", "dict_type", "model_type", "model_attributes_type", "int_type",
               "int_parsing", "float_type", "float_parsing", "bool_type", "bool_parsing",
               "list_type"}  # fmt: skip


def field_errors(errors: Sequence[Mapping[str, Any]]) -> list[str]:
    """One "field: reason" per validation error. Pydantic reports a union (a kernel is a
    built-in's name or a described stencil) once per branch, under the branch's internal
    name; a client wants the reason of the branch its value was meant for. So a branch that
    only refused the value's type is dropped where another branch has a real reason, the
    branch names leave the field path, and a value no branch takes gets one line."""
    errors = list(errors)[:64]  # a big body can fail thousands of ways; 5 are answered
    unions: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for e in errors:  # group by the path above a possible branch name
        loc = _loc(e)
        if len(loc) >= 2:
            unions.setdefault(loc[:-1], []).append(e)
    branch_at: dict[tuple[Any, ...], int] = {}
    dropped: set[int] = set()
    for prefix, typed in unions.items():
        wrong = [e for e in typed if e.get("type") in _WRONG_TYPE]
        if not wrong:
            continue
        tags = {_loc(e)[-1] for e in wrong}
        others = [
            e for e in errors if _loc(e)[: len(prefix)] == prefix
            and len(_loc(e)) > len(prefix) and _loc(e)[len(prefix)] not in tags
        ]  # fmt: skip
        if not others and len(wrong) < 2:
            continue  # a plain field of the wrong type, no union
        branch_at[prefix] = len(prefix)
        if others and any(e.get("type") not in _WRONG_TYPE for e in others):
            dropped.update(id(e) for e in wrong)
    lines: list[str] = []
    for prefix, at in branch_at.items():  # every branch refused the type: one line
        members = [e for e in errors if _loc(e)[:at] == prefix and len(_loc(e)) == at + 1]
        if (
            members
            and all(e.get("type") in _WRONG_TYPE for e in members)
            and not any(_loc(e)[:at] == prefix and len(_loc(e)) > at + 1 for e in errors)
        ):
            dropped.update(id(e) for e in members)
            reasons = " or ".join(dict.fromkeys(str(e.get("msg", "")) for e in members))
            lines.append(f"{'.'.join(map(str, prefix))}: {reasons}")
    for e in errors:
        if id(e) in dropped:
            continue
        if e.get("type") == "json_invalid":  # its location is a character, not a field
            why = (e.get("ctx") or {}).get("error", e.get("msg", ""))
            where = ".".join(map(str, _loc(e)))
            lines.append(f"body: not valid JSON at character {where} ({why}); send one JSON object")
            continue
        path = list(_loc(e))
        for prefix, at in branch_at.items():
            if tuple(path[:at]) == prefix and len(path) > at:
                del path[at]  # the branch's internal name
                break
        reason = str(e.get("msg", "")).removeprefix("Value error, ")
        lines.append(f"{'.'.join(map(str, path)) or 'body'}: {reason}")
    return lines


def _loc(error: Mapping[str, Any]) -> tuple[Any, ...]:
    # Only FastAPI's leading "body": a described stencil has a field of that name too.
    loc = tuple(error.get("loc", ()))
    return loc[1:] if loc[:1] == ("body",) else loc


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the daemon on this machine."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def serve(
    model: WgModel | str | Path,
    db: str | Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    compile_limits: CompileLimits | None = None,
    refusal_limits: RefusalLimits | None = None,
    workers: int = 1,
) -> None:
    """Run the daemon, in ``workers`` processes sharing the port. Off loopback, writes always
    need a token: ``token``, or one generated here and printed once on stderr."""
    import functools
    import gc
    import secrets
    import sys

    from perfport.service.workers import bind, resolve, run_workers

    uvicorn = require("uvicorn", _EXTRA, _PURPOSE)
    resolve(host, port)  # a --host that names nothing is one line, before any token is printed
    model = model if isinstance(model, WgModel) else load_model(model)
    if compiles_kernels(model):
        # One line now, not a 503 for every question: what the daemon lacks, or a memory
        # limit under which not even a built-in stencil compiles on this machine (checked by
        # compiling one, seconds, only below the default, which leaves PoCL twice its need).
        limits = compile_limits or CompileLimits()
        lowered = limits.memory_bytes < CompileLimits().memory_bytes
        problem = probe_features(limits if lowered else None)
        if problem is not None:
            raise PerfportError(problem)
    if not is_loopback(host):
        print(f"perfport serve: warning: binding {host}, not loopback: anyone who reaches it "
              "can ask it to compile kernels; bind 127.0.0.1 unless you need the network",
              file=sys.stderr, flush=True)  # fmt: skip
        if token is None:
            token = secrets.token_urlsafe(32)
            print(f"perfport serve: writes need 'Authorization: Bearer {token}' "
                  "(give --token or PERFPORT_TOKEN to choose it)", file=sys.stderr, flush=True)  # fmt: skip
    build = functools.partial(create_app, model, db, token=token, compile_limits=compile_limits,
                              refusal_limits=refusal_limits)  # fmt: skip
    # The model and the libraries live as long as the daemon: frozen, they are no longer walked
    # by the collector's full passes, which paused one first-time answer in a few hundred for
    # 70-100 ms (under 5 ms since; benchmarks/daemon_latency.py, docs/results). Frozen before
    # the workers fork, the pages stay shared.
    if workers <= 1:
        app = build()
        # Bound here, not by uvicorn: a port in use is one line before the URL is printed,
        # not the URL and then uvicorn's own error.
        sock = bind(host, port)
        print(f"perfport serve: {_url(host, sock)}", file=sys.stderr, flush=True)
        gc.collect()
        gc.freeze()
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
        return
    WgService(model, db)  # a bad --db is refused here, once, not by every worker
    sock = bind(host, port)
    print(f"perfport serve: {_url(host, sock)} ({workers} worker processes)",
          file=sys.stderr, flush=True)  # fmt: skip
    gc.collect()
    gc.freeze()

    def serve_one(sock: Any, gate: RefusalGate, write_lock: Any) -> None:
        app = build(gate=gate, write_lock=write_lock)
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])

    run_workers(workers, sock, serve_one, refusal_limits or RefusalLimits())


def _url(host: str, sock: Any) -> str:
    """The health URL of the bound socket: its port, which --port 0 leaves to the system."""
    return f"http://{host}:{sock.getsockname()[1]}/v1/health"
