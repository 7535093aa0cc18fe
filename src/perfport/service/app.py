"""The work-group-size prediction daemon (FastAPI; pip install 'perfport[serve]').

A kernel launcher asks ``POST /v1/wg/predict`` for a work-group size, sending the kernel (a
built-in stencil's name, or its own stencil described as ``perfport.kernels.described_stencil``
reads it: name, C body, border sizes), its problem and the device's properties; the daemon
extracts the features (compiling the kernel with PoCL, once per kernel) and answers. A launch
the driver refused is reported to ``POST /v1/wg/refused`` and stored, so that size is never
proposed again for that kernel and device. ``GET /v1/health`` says it is up. Malformed
requests get a 4xx with the reason, never a 500.
"""

# No `from __future__ import annotations` here: FastAPI and pydantic read these annotations at
# run time, and the request models are local to create_app.
import gc
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from perfport._core import (
    Backend,
    Config,
    DeviceInfo,
    DeviceType,
    Measurement,
    Outcome,
    PerfportError,
)
from perfport._core.optional import require
from perfport._core.version import __version__
from perfport.kernels import builtin, described_stencil
from perfport.models.wgmodel import WgModel, load_model
from perfport.space import PruningReport
from perfport.store import Store
from perfport.tune.tune import resolve_problem
from perfport.tune.wg_predict import check_scenario, predict_wg, refused_sizes

_CACHED = 4096  # scenarios and answers remembered (then forgotten all at once)
_FILES = (".py", ".toml", ".yaml", ".yml", ".json")


def create_app(model: WgModel | str | Path, db: str | Path = "perfport.db") -> Any:
    fastapi = require("fastapi", "serve", "The prediction daemon")
    pydantic = require("pydantic", "serve", "The prediction daemon")
    responses = require("fastapi.responses", "serve", "The prediction daemon")
    model = model if isinstance(model, WgModel) else load_model(model)
    if Path(db).exists():  # a path that is not a perfport store is refused now, not per request
        Store(db, create=False).close()

    class Device(pydantic.BaseModel):
        """The device's OpenCL (or CUDA) properties, as the launcher queried them."""

        model_config = pydantic.ConfigDict(extra="forbid")
        name: str
        vendor: str = ""
        type: str = "gpu"
        backend: str = "opencl"
        driver: str = ""
        platform: str = ""
        version: str = ""
        compute_units: int = pydantic.Field(gt=0)
        max_work_group_size: int = pydantic.Field(gt=0)
        max_work_item_sizes: list[int] = pydantic.Field(min_length=1, max_length=3)
        local_mem_bytes: int = pydantic.Field(ge=0)
        global_mem_bytes: int = pydantic.Field(default=0, ge=0)
        subgroup_size: int | None = None

        def info(self) -> DeviceInfo:
            try:
                backend, kind = Backend(self.backend), DeviceType(self.type)
            except ValueError as exc:
                raise PerfportError(f"device: {exc}") from None
            return DeviceInfo(f"client:{self.name}", backend, self.name, self.vendor, kind, self.driver,
                              self.platform, self.version, self.compute_units, self.max_work_group_size,
                              tuple(self.max_work_item_sizes), self.local_mem_bytes, self.global_mem_bytes,
                              self.subgroup_size)  # fmt: skip

    class PredictRequest(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        # A built-in stencil's name, or a stencil description (described_stencil checks it).
        kernel: str | dict[str, Any]
        problem: dict[str, int | float | str | bool] = pydantic.Field(default_factory=dict)
        device: Device

    class RefusedRequest(PredictRequest):
        wg: list[int] = pydantic.Field(min_length=2, max_length=2)
        message: str = pydantic.Field(default="", max_length=2000)

    app = fastapi.FastAPI(title="perfport", version=__version__)

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

    # A launcher asks the same question at every launch. Resolved scenarios are pure functions
    # of the request; answers also depend on the refused sizes, so they are keyed by those too
    # (read from the store on every request: refusals other processes record count at once).
    scenarios: dict[str, tuple[Any, Any, DeviceInfo]] = {}
    answers: dict[tuple[str, frozenset[tuple[int, int]]], dict[str, Any]] = {}
    # Built-in kernels by name: building a KernelSpec validates and parses all its expressions
    # (several ms), and the same spec object keeps the caches keyed by it warm (features,
    # constraints), so a question about a new problem size does not pay for it again.
    specs: dict[tuple[str, str], Any] = {}

    def kernel(given: str | dict[str, Any]) -> Any:
        key = (
            ("name", given)
            if isinstance(given, str)
            else ("described", json.dumps(given, sort_keys=True))
        )
        if key not in specs:
            if isinstance(given, dict):
                spec = described_stencil(given)
            elif not 0 < len(given) <= 200 or "/" in given or given.endswith(_FILES):
                raise PerfportError(
                    "kernel: give a built-in stencil's name or a stencil description "
                    "({name, body, north, south, east, west}); the daemon loads no files"
                )
            else:
                spec = builtin(given)
            if len(specs) >= _CACHED:
                specs.clear()
            specs[key] = spec
        return specs[key]

    # One read connection per worker thread (sqlite3 connections stay in their thread),
    # opened once the database exists: opening a store costs more than the look-up. The
    # connection is in autocommit mode, so each look-up sees refusals other processes stored.
    local = threading.local()

    def reader() -> Store | None:
        store = getattr(local, "store", None)
        if store is None and Path(db).is_file():
            store = local.store = Store(db, create=False)
        return store

    def scenario(request: PredictRequest, key: str) -> tuple[Any, Any, DeviceInfo]:
        """The request's kernel spec, problem and device; ``key`` is the request as JSON."""
        if key in scenarios:
            return scenarios[key]
        spec = kernel(request.kernel)
        problem, device = resolve_problem(spec, request.problem), request.device.info()
        check_scenario(spec, problem, device)  # before anything is stored
        found = spec, problem, device
        if len(scenarios) >= _CACHED:
            scenarios.clear()
        scenarios[key] = found
        return found

    @app.get("/v1/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "version": __version__,
            "method": model.method,
            "trained_on": model.scenarios,
        }

    # On the event loop, not in the thread pool: an answer takes well under a millisecond of
    # Python (GIL-bound either way), and the hop to a worker thread and back cost more than
    # that (first-time p50 2.8-3.0 ms in the pool, 1.8-1.9 ms here; benchmarks/daemon_latency.py).
    @app.post("/v1/wg/predict")
    async def predict(request: PredictRequest) -> dict[str, Any]:
        started = time.perf_counter()
        asked = request.model_dump_json()
        spec, problem, device = scenario(request, asked)
        store = reader()
        refused = refused_sizes(store, spec, device) if store is not None else set()
        key = (asked, frozenset(refused))
        if key in answers:
            ms = (time.perf_counter() - started) * 1000.0
            return {**answers[key], "predict_ms": ms, "cached": True}
        answer = predict_wg(model, spec, problem, device, refused).to_json()
        if len(answers) >= _CACHED:
            answers.clear()
        answers[key] = answer
        return {**answer, "cached": False}

    @app.post("/v1/wg/refused")
    def refused(request: RefusedRequest) -> dict[str, Any]:
        spec, problem, device = scenario(request, request.model_dump_json())
        wc, wr = request.wg
        config = Config.of(wc=wc, wr=wr)
        spec.check_config(config, "wg")
        with Store(db) as store:
            ids = (store.device_id(device), store.kernel_id(spec), store.problem_id(problem))
            key = f"reported-refusals-{device.fingerprint}-{spec.source_hash[:16]}-{ids[2]}"
            campaign = store.open_campaign(key, ids, "reported", 0, {}, PruningReport(0, 0, ()))
            message = f"reported by a client: {request.message}".strip()
            added = store.record(campaign, Measurement(config, Outcome.LAUNCH_REFUSED, message))
        return {"stored": added, "wg": [wc, wr]}

    return app


def serve(
    model: WgModel | str | Path, db: str | Path, host: str = "127.0.0.1", port: int = 8765
) -> None:
    uvicorn = require("uvicorn", "serve", "The prediction daemon")
    app = create_app(model, db)
    print(f"perfport serve: http://{host}:{port}/v1/health", file=sys.stderr, flush=True)
    # The model and the libraries live as long as the daemon: frozen, they are no longer walked
    # by the collector's full passes, which paused one first-time answer in a few hundred for
    # 70-100 ms (under 5 ms since; benchmarks/daemon_latency.py, docs/results).
    gc.collect()
    gc.freeze()
    uvicorn.run(app, host=host, port=port, log_level="warning")
