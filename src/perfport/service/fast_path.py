"""``POST /v1/wg/predict`` for a well-formed question without the web framework's per-request
machinery (routing, dependency solving, request and response objects): an ASGI wrapper
around the daemon's FastAPI app that reads the body, validates it with the route's own
request model, asks the same handler and writes the JSON answer itself.

Anything else goes to the app untouched, so every route, limit and error answer stays the
framework's: another path or method, a body over the limit or not declared as JSON, a body
that does not parse or validate (the app's 4xx, with its wording), a dropped connection. The
body read here is handed on as it came. A ``PerfportError`` of the answer is turned into the
same error answer the app's handler gives (``errors``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from perfport._core import PerfportError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

PATH = "/v1/wg/predict"
JSON_TYPES = (b"application/json", b"application/json; charset=utf-8")


class FastPredict:
    """``validate(parsed JSON)`` raises on a malformed question (the app then answers it);
    ``answer(request)`` gives the reply's JSON-ready dict; ``errors(exc)`` the (status, body
    bytes, extra headers) of a PerfportError's answer."""

    def __init__(
        self,
        app: App,
        validate: Callable[[Any], Any],
        answer: Callable[[Any], Awaitable[dict[str, Any]]],
        errors: Callable[[PerfportError], tuple[int, bytes, list[tuple[bytes, bytes]]]],
        limit: int,
    ) -> None:
        self.app, self.validate, self.answer, self.errors = app, validate, answer, errors
        self.limit = limit

    def __getattr__(self, name: str) -> Any:
        # The app's own attributes (its OpenAPI schema, routes, state) stay reachable.
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if (
            headers.get(b"content-type", b"").lower() not in JSON_TYPES
            or declared is None
            or not declared.isdigit()
            or int(declared) > self.limit
        ):
            await self.app(scope, receive, send)  # the app's own answer (413, 422, ...)
            return
        messages: list[Message] = []
        size, more = 0, True
        while more:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":  # a dropped connection: the app's to handle
                break
            size += len(message.get("body", b""))
            more = bool(message.get("more_body")) and size <= self.limit
        request = None
        if messages[-1]["type"] == "http.request" and not more and size <= self.limit:
            try:
                body = b"".join(m.get("body", b"") for m in messages)
                request = self.validate(json.loads(body))
            except Exception:  # malformed: the app answers it, with its wording
                request = None
        if request is None:
            await self.app(scope, _replay(messages, receive), send)
            return
        await self._answer(request, send)

    async def _answer(self, request: Any, send: Send) -> None:
        extra: list[tuple[bytes, bytes]] = []
        try:
            status = 200
            body = json.dumps(
                await self.answer(request), separators=(",", ":"), allow_nan=False
            ).encode()
        except PerfportError as exc:
            status, body, extra = self.errors(exc)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()), *extra]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """The messages already read, then the connection's own."""
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed
