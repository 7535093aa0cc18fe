"""The work-group-size prediction service as plain Python: one object that owns the model,
the results database's path and the caches, with a method for each endpoint's work. The HTTP
adapter (``perfport.service.app``) only turns requests into calls and answers into JSON.

A launcher asks the same question at every launch, so resolved scenarios (pure functions of
the request) and answers (also keyed by the refused sizes, read from the store on every
question: refusals other processes record count at once) are remembered.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from perfport._core import (
    Config,
    DeviceInfo,
    KernelSpec,
    Measurement,
    Outcome,
    PerfportError,
    Problem,
)
from perfport.kernels import builtin, described_stencil
from perfport.space import PruningReport
from perfport.store import Store
from perfport.tune import resolve_problem
from perfport.wg import WgModel, WgPrediction, check_scenario, load_model, predict_wg, refused_sizes

CACHED = 4096  # scenarios, answers and kernels remembered (then forgotten all at once)
_FILES = (".py", ".toml", ".yaml", ".yml", ".json")


class DeviceDescription(Protocol):
    """A device as a client described it; ``info`` checks the description."""

    def info(self) -> DeviceInfo: ...


@dataclass(frozen=True)
class Scenario:
    spec: KernelSpec
    problem: Problem
    device: DeviceInfo


@dataclass(frozen=True)
class Answer:
    prediction: WgPrediction
    cached: bool  # remembered from an earlier identical question (predict_ms: the look-up's)


@dataclass(frozen=True)
class RefusalStored:
    stored: bool  # False where the store already held this refusal
    wg: tuple[int, int]


class WgService:
    """Answers work-group-size questions with one model and records refused launches in
    ``db``. Thread-safe for the daemon's use: each thread reads through its own store
    connection; the caches are plain dicts, whose single operations the GIL keeps whole."""

    def __init__(self, model: WgModel | str | Path, db: str | Path = "perfport.db") -> None:
        self.model = model if isinstance(model, WgModel) else load_model(model)
        self.db = db
        if Path(db).exists():  # a path that is not a perfport store is refused now, not per request
            Store(db, create=False).close()
        self._scenarios: dict[str, Scenario] = {}
        self._answers: dict[tuple[str, frozenset[tuple[int, int]]], WgPrediction] = {}
        # Built-in kernels by name: building a KernelSpec validates and parses all its
        # expressions (several ms), and the same spec object keeps the caches keyed by it warm
        # (features, constraints), so a question about a new problem size does not pay again.
        self._specs: dict[tuple[str, str], KernelSpec] = {}
        # One read connection per thread (sqlite3 connections stay in their thread), opened
        # once the database exists: opening a store costs more than the look-up. It is in
        # autocommit mode, so each look-up sees refusals other processes stored.
        self._local = threading.local()

    def kernel(self, given: str | Mapping[str, Any]) -> KernelSpec:
        """A built-in stencil by name, or a stencil description; the service loads no files."""
        if isinstance(given, str):
            key = ("name", given)
        else:
            key = ("described", json.dumps(given, sort_keys=True))
        if key not in self._specs:
            if not isinstance(given, str):
                spec = described_stencil(dict(given))
            elif not 0 < len(given) <= 200 or "/" in given or given.endswith(_FILES):
                raise PerfportError(
                    "kernel: give a built-in stencil's name or a stencil description "
                    "({name, body, north, south, east, west}); the daemon loads no files"
                )
            else:
                spec = builtin(given)
            if len(self._specs) >= CACHED:
                self._specs.clear()
            self._specs[key] = spec
        return self._specs[key]

    def scenario(
        self,
        key: str,
        kernel: str | Mapping[str, Any],
        problem: Mapping[str, Any],
        device: DeviceDescription,
    ) -> Scenario:
        """The question's kernel spec, problem and device, checked; ``key`` names the question
        (the request as canonical JSON)."""
        if key in self._scenarios:
            return self._scenarios[key]
        spec = self.kernel(kernel)
        found = Scenario(spec, resolve_problem(spec, problem), device.info())
        check_scenario(found.spec, found.problem, found.device)  # before anything is stored
        if len(self._scenarios) >= CACHED:
            self._scenarios.clear()
        self._scenarios[key] = found
        return found

    def _reader(self) -> Store | None:
        store = getattr(self._local, "store", None)
        if store is None and Path(self.db).is_file():
            store = self._local.store = Store(self.db, create=False)
        return store

    def predict(
        self,
        key: str,
        kernel: str | Mapping[str, Any],
        problem: Mapping[str, Any],
        device: DeviceDescription,
    ) -> Answer:
        """A size for the scenario that the store has not seen refused for it; ``key`` names
        the question (the request as canonical JSON)."""
        started = time.perf_counter()
        found = self.scenario(key, kernel, problem, device)
        store = self._reader()
        refused = refused_sizes(store, found.spec, found.device) if store is not None else set()
        remembered = (key, frozenset(refused))
        if remembered in self._answers:
            ms = (time.perf_counter() - started) * 1000.0
            return Answer(replace(self._answers[remembered], predict_ms=ms), cached=True)
        prediction = predict_wg(self.model, found.spec, found.problem, found.device, refused)
        if len(self._answers) >= CACHED:
            self._answers.clear()
        self._answers[remembered] = prediction
        return Answer(prediction, cached=False)

    def record_refused(
        self,
        key: str,
        kernel: str | Mapping[str, Any],
        problem: Mapping[str, Any],
        device: DeviceDescription,
        wg: Sequence[int],
        message: str = "",
    ) -> RefusalStored:
        """Store that the client's driver refused to launch ``wg`` in this scenario, so that
        no later answer proposes it for this kernel and device."""
        found = self.scenario(key, kernel, problem, device)
        wc, wr = wg
        config = Config.of(wc=wc, wr=wr)
        found.spec.check_config(config, "wg")
        spec, device_info = found.spec, found.device
        with Store(self.db) as store:
            ids = (
                store.device_id(device_info),
                store.kernel_id(spec),
                store.problem_id(found.problem),
            )
            name = f"reported-refusals-{device_info.fingerprint}-{spec.source_hash[:16]}-{ids[2]}"
            campaign = store.open_campaign(name, ids, "reported", 0, {}, PruningReport(0, 0, ()))
            note = f"reported by a client: {message}".strip()
            added = store.record(campaign, Measurement(config, Outcome.LAUNCH_REFUSED, note))
        return RefusalStored(added, (wc, wr))
