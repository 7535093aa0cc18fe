"""The work-group-size prediction daemon's HTTP adapter (FastAPI; pip install 'perfport[serve]').

A kernel launcher asks ``POST /v1/wg/predict`` for a work-group size, sending the kernel (a
built-in stencil's name, or its own stencil described as ``perfport.kernels.described_stencil``
reads it: name, C body, border sizes), its problem and the device's properties; the daemon
extracts the features (compiling the kernel with PoCL, once per kernel) and answers. A launch
the driver refused is reported to ``POST /v1/wg/refused`` and stored, so that size is never
proposed again for that kernel and device. ``GET /v1/health`` says it is up. Malformed
requests get a 4xx with the reason, never a 500. The work is ``WgService``'s; routes only
turn requests into its calls and its answers into JSON.
"""

# No `from __future__ import annotations` here: FastAPI reads the routes' annotations at run
# time, and the request models they name are imported inside create_app (pydantic is optional).
import gc
import sys
from pathlib import Path
from typing import Any

from perfport._core import PerfportError
from perfport._core.optional import require
from perfport._core.version import __version__
from perfport.service.service import WgService
from perfport.wg import WgModel

_EXTRA, _PURPOSE = "serve", "The prediction daemon"


def create_app(model: WgModel | str | Path, db: str | Path = "perfport.db") -> Any:
    fastapi = require("fastapi", _EXTRA, _PURPOSE)
    require("pydantic", _EXTRA, _PURPOSE)
    from perfport.service.schemas import PredictRequest, RefusedRequest  # needs pydantic

    service = WgService(model, db)
    app = fastapi.FastAPI(title="perfport", version=__version__)
    _add_error_handlers(app, fastapi)

    @app.get("/v1/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "method": service.model.method,
                "trained_on": service.model.scenarios}  # fmt: skip

    # On the event loop, not in the thread pool: an answer takes well under a millisecond of
    # Python (GIL-bound either way), and the hop to a worker thread and back cost more than
    # that (first-time p50 2.8-3.0 ms in the pool, 1.8-1.9 ms here; benchmarks/daemon_latency.py).
    @app.post("/v1/wg/predict")
    async def predict(request: PredictRequest) -> dict[str, Any]:
        key = request.model_dump_json()
        answer = service.predict(key, request.kernel, request.problem, request.device)
        return {**answer.prediction.to_json(), "cached": answer.cached}

    @app.post("/v1/wg/refused")
    def refused(request: RefusedRequest) -> dict[str, Any]:
        key = request.model_dump_json()
        stored = service.record_refused(key, request.kernel, request.problem, request.device,
                                        request.wg, request.message)  # fmt: skip
        return {"stored": stored.stored, "wg": list(stored.wg)}

    return app


def _add_error_handlers(app: Any, fastapi: Any) -> None:
    responses = require("fastapi.responses", _EXTRA, _PURPOSE)

    @app.exception_handler(PerfportError)
    async def bad_request(_: Any, exc: PerfportError) -> Any:
        return responses.JSONResponse(status_code=400, content={"detail": str(exc)})

    @app.exception_handler(fastapi.exceptions.RequestValidationError)
    async def malformed(_: Any, exc: Any) -> Any:
        # FastAPI's own answer echoes the whole input back (megabytes for a big body) and fails
        # on a number JSON cannot hold (1e400 parses as infinity): name the fields instead.
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}: {e.get('msg', '')}"
            for e in exc.errors()[:5]
        ]
        return responses.JSONResponse(
            status_code=422, content={"detail": "; ".join(problems)[:2000]}
        )


def serve(
    model: WgModel | str | Path, db: str | Path, host: str = "127.0.0.1", port: int = 8765
) -> None:
    uvicorn = require("uvicorn", _EXTRA, _PURPOSE)
    app = create_app(model, db)
    print(f"perfport serve: http://{host}:{port}/v1/health", file=sys.stderr, flush=True)
    # The model and the libraries live as long as the daemon: frozen, they are no longer walked
    # by the collector's full passes, which paused one first-time answer in a few hundred for
    # 70-100 ms (under 5 ms since; benchmarks/daemon_latency.py, docs/results).
    gc.collect()
    gc.freeze()
    uvicorn.run(app, host=host, port=port, log_level="warning")
