"""The work-group-size prediction service as plain Python: one object that owns the model,
the results database's path and the caches, with a method for each endpoint's work. The HTTP
adapter (``perfport.service.app``) only turns requests into calls and answers into JSON.

A launcher asks the same question at every launch, so resolved scenarios (pure functions of
the request) and answers (also keyed by the refused sizes, read from the store on every
question: refusals other processes record count at once) are remembered, keyed by a digest
of the request, so memory does not grow with what clients send. Kernels are compiled for
their features in separate, limited processes (``CompilePool``), and the store is read
without a write lock, so neither can stall the daemon.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from perfport._core import (
    Config,
    DeviceInfo,
    KernelSpec,
    Measurement,
    Outcome,
    PerfportError,
    Problem,
    StoreError,
)
from perfport.features import COMPILE_FREE_FEATURES
from perfport.features.ir import cached_classes
from perfport.kernels import builtin, described_stencil
from perfport.kernels.client_source import check_client_source
from perfport.service.compiler import (
    CompileLimits,
    CompilePool,
    ServiceBusy,
    features_missing,
)
from perfport.service.db_file import file_identity, file_state
from perfport.service.limits import (
    Implausible,
    KernelRefusalsFull,
    RefusalGate,
    RefusalLimits,
    RefusalsFull,
)
from perfport.space import PruningReport
from perfport.store import REPORTED, ReadOnlyStore, Store, count_outcomes_of_strategy
from perfport.store.integrity import DatabaseLocked, recovery_hint
from perfport.tune import resolve_problem
from perfport.wg import (
    WgModel,
    WgPrediction,
    WgQuestion,
    check_scenario,
    load_model,
    predict_wg_many,
    refused_sizes,
)
from perfport.wg.predict import check_model_features, legal_sizes

CACHED = 4096  # scenarios, answers and kernels remembered (then forgotten all at once)
MESSAGE_KEPT = 300  # characters of a client's refusal message that are stored
LOCK_WAIT_S = 5.0  # how long a refusal waits for another process's write lock (then a 503)
_FILES = (".py", ".toml", ".yaml", ".yml", ".json")


class DeviceDescription(Protocol):
    """A device as a client described it; ``info`` checks the description."""

    def info(self) -> DeviceInfo: ...


@dataclass(frozen=True)
class Scenario:
    spec: KernelSpec
    problem: Problem
    device: DeviceInfo
    # The compile-time defines its features are counted with (the default configuration's).
    defines: tuple[tuple[str, str], ...] = field(default=())
    # The legal (wc, wr) sizes, as check_scenario found them (None: look them up).
    legal: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Answer:
    prediction: WgPrediction
    cached: bool  # remembered from an earlier identical question (predict_ms: the look-up's)


@dataclass(frozen=True)
class RefusalStored:
    stored: bool  # False where the store already held this refusal
    wg: tuple[int, int]


def digest(key: str) -> bytes:
    """What the caches keep of a request: 16 bytes, whatever its size."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class WgService:
    """Answers work-group-size questions with one model and records refused launches in
    ``db``. Thread-safe for the daemon's use: each thread reads through its own read-only
    store connection; the caches are plain dicts, whose single operations the GIL keeps
    whole; writes go one at a time."""

    def __init__(
        self,
        model: WgModel | str | Path,
        db: str | Path = "perfport.db",
        *,
        compile_limits: CompileLimits | None = None,
        refusal_limits: RefusalLimits | None = None,
        gate: RefusalGate | None = None,
        write_lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        """``gate`` and ``write_lock``: shared with the other processes of a daemon that runs
        several (``perfport.service.workers``); by default this process's own."""
        self.model = model if isinstance(model, WgModel) else load_model(model)
        check_model_features(self.model)  # a model no question can use: refused at start
        self.db = db
        if Path(db).exists():  # a path that is not a perfport store is refused now, not per request
            Store(db, create=False).close()
        elif not Path(db).absolute().parent.is_dir():  # else every refusal would be a 503
            raise StoreError(
                f"the daemon's database {db}: its folder {Path(db).absolute().parent} does not "
                "exist; create it or give another --db"
            )
        self.compiler = CompilePool(compile_limits)
        self.compile_free = not compiles_kernels(self.model)
        if not self.compile_free and importlib.util.find_spec("llvmlite") is None:
            # Known without starting OpenCL in this process; a missing PoCL device is found by
            # 'perfport serve' at start (probe_features) or by the first build.
            self.compiler.missing = features_missing(
                "the Python package 'llvmlite' is not installed"
            )
        self.gate = gate if gate is not None else RefusalGate(refusal_limits)
        self._scenarios: dict[bytes, Scenario] = {}
        self._answers: dict[tuple[bytes, frozenset[tuple[int, int]]], WgPrediction] = {}
        # Built-in kernels by name: building a KernelSpec validates and parses all its
        # expressions (several ms), and the same spec object keeps the caches keyed by it warm
        # (features, constraints), so a question about a new problem size does not pay again.
        self._specs: dict[tuple[str, bytes], KernelSpec] = {}
        # One read-only connection per thread, opened once the database exists: opening costs
        # more than the look-up, and in autocommit mode each look-up sees refusals other
        # processes stored.
        self._local = threading.local()
        # Refusal writes one at a time, across processes where several serve: a cap is checked
        # and the refusal stored under it, so no two writers both take the last place.
        self._write = write_lock if write_lock is not None else threading.Lock()
        # Refused sizes by (kernel, device), valid while the store's data_version (read on the
        # event loop through ``_watch``: in WAL mode it never waits) has not moved since.
        self._known: dict[tuple[str, str], tuple[int, frozenset[tuple[int, int]]]] = {}
        self._watch: ReadOnlyStore | None = None
        self._watched: tuple[int, int] | None = None  # the file it opened (``file_identity``)
        self._watching = threading.Lock()
        # One write connection, used under self._write: opening one checks the whole file
        # (quick check, schema, values), which a refusal should not pay each time.
        self._writer: Store | None = None
        self._written: tuple[int, ...] = ()  # the file as the daemon's last write left it

    def unavailable(self) -> str | None:
        """Why this daemon can answer no question that needs a kernel's features (a package
        or device it lacks: the fix is the server's), or None."""
        return None if self.compile_free else self.compiler.missing

    def kernel(self, given: str | Mapping[str, Any]) -> KernelSpec:
        """A built-in stencil by name, or a stencil description; the service loads no files,
        and a described body may not use the preprocessor (``check_client_source``)."""
        if isinstance(given, str):
            key = ("name", digest(given))
        else:
            key = ("described", digest(json.dumps(given, sort_keys=True, default=str)))
        if key not in self._specs:
            if not isinstance(given, str):
                body = given.get("body")
                if isinstance(body, str):
                    check_client_source(body, f"stencil {given.get('name', '')!s:.64}")
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
        (the request as canonical JSON; only its digest is kept)."""
        name = digest(key)
        if name in self._scenarios:
            return self._scenarios[name]
        spec = self.kernel(kernel)
        resolved = resolve_problem(spec, problem)
        info = device.info()
        legal = check_scenario(spec, resolved, info)  # before anything is stored
        env = spec.env(spec.default or {}, spec.problem.merged(resolved))
        defines = tuple(sorted(spec.build_defines(env).items()))
        found = Scenario(spec, resolved, info, defines, legal)
        if len(self._scenarios) >= CACHED:
            self._scenarios.clear()
        self._scenarios[name] = found
        return found

    def compiled(self, found: Scenario) -> bool:
        """Whether the scenario's kernel features are known, or the model needs none (else
        ``prepare`` compiles)."""
        return self.compile_free or cached_classes(found.spec, dict(found.defines)) is not None

    def prepare(self, found: Scenario) -> None:
        """Compile the kernel for its features in a limited process. Blocks: the daemon
        calls it from a worker thread."""
        self.compiler.counts(found.spec, dict(found.defines))

    def _reader(self) -> Store | None:
        # A connection reads the file it opened, even after that file is replaced (a backup
        # restored): reopened when the path names another file, as the writer is.
        now = file_identity(self.db)
        store = getattr(self._local, "store", None)
        if store is not None and self._local.identity != now:
            self._local.store = None
            store.close()
            store = None
        if store is None and now is not None:
            store = self._local.store = ReadOnlyStore(self.db)
            self._local.identity = now
        return store

    def refused(self, found: Scenario) -> frozenset[tuple[int, int]]:
        """The sizes the store has seen this device refuse for this kernel, read without a
        write lock (a writer never makes this wait). Blocking on the first call of a thread."""
        with self._reading():
            store = self._reader()
            if store is None:
                return frozenset()
            version = self._data_version(store)  # before the read: a later write moves it
            sizes = frozenset(refused_sizes(store, found.spec, found.device))
        if version is not None:
            if len(self._known) >= CACHED:
                self._known.clear()
            self._known[(found.spec.source_hash, found.device.fingerprint)] = (version, sizes)
        return sizes

    def refused_known(self, found: Scenario) -> frozenset[tuple[int, int]] | None:
        """``refused(found)`` without reading the results, when no connection has committed
        to the store since they were last read (SQLite's data_version, which sees every
        process's writes); None when they must be read (``refused``, off the event loop).
        Never waits: the version is only looked at in WAL mode, where readers never block."""
        if self._watch is None and not Path(self.db).exists():
            return frozenset()  # nothing stored yet (a stat; ``refused`` would say the same)
        known = self._known.get((found.spec.source_hash, found.device.fingerprint))
        if known is None or self._watch is None:
            return None
        return known[1] if self._data_version(None) == known[0] else None

    def _data_version(self, store: Store | None) -> int | None:
        # One connection reports the version, so values compare; opened by a worker thread
        # (``store`` given), and again when the path names another file than it opened: on
        # the event loop (no ``store``), that is None, so the refusals are read again.
        with self._watching:
            if self._watch is not None and file_identity(self.db) != self._watched:
                if store is None:
                    return None
                self._watch.close()
                self._watch = None
                self._known.clear()  # versions of another connection, which do not compare
            if self._watch is None and store is not None and getattr(store, "wal", False):
                self._watched = file_identity(self.db)
                self._watch = ReadOnlyStore(self.db)
            if self._watch is None:
                return None
            return int(self._watch.query("PRAGMA data_version")[0][0])

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A database that SQLite cannot read (damaged since the daemon started) is the
        daemon's problem, not the client's: a StoreError (503 with the repair hint), never a 500."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"the daemon's database {self.db} cannot be read ({str(exc)[:80]}); "
                + recovery_hint(str(self.db))
            ) from None

    def answer(self, key: str, found: Scenario, refused: frozenset[tuple[int, int]]) -> Answer:
        """The model's size for a prepared scenario, given the sizes known to be refused."""
        (answer,) = self.answer_many([(key, found, refused)])
        if isinstance(answer, Exception):
            raise answer
        return answer

    def answer_many(
        self, questions: Sequence[tuple[str, Scenario, frozenset[tuple[int, int]]]]
    ) -> list[Answer | Exception]:
        """``answer`` for each (key, scenario, refused) question, the same answers, with the
        model asked once for all that it has not answered before (``predict_wg_many``); a
        question that fails gets its exception in its place, the others their answers. A
        question repeated within the call is answered once and then remembered, as one
        after the other."""
        started = time.perf_counter()
        out: list[Answer | Exception | None] = [None] * len(questions)
        todo: dict[tuple[bytes, frozenset[tuple[int, int]]], list[int]] = {}
        for i, (key, found, refused) in enumerate(questions):
            self.gate.asked(found.spec.source_hash, found.device.fingerprint)
            remembered = (digest(key), refused)
            if remembered in self._answers:
                ms = (time.perf_counter() - started) * 1000.0
                out[i] = Answer(replace(self._answers[remembered], predict_ms=ms), cached=True)
            else:
                todo.setdefault(remembered, []).append(i)
        # ``scenario`` checked each: not again per answer.
        asked = [
            WgQuestion(found.spec, found.problem, found.device, refused, found.legal)
            for _, found, refused in (questions[at[0]] for at in todo.values())
        ]
        predictions = predict_wg_many(self.model, asked)
        for (remembered, at), prediction in zip(todo.items(), predictions, strict=True):
            if isinstance(prediction, Exception):  # asked again, it would fail again
                for i in at:
                    out[i] = prediction
                continue
            if len(self._answers) >= CACHED:
                self._answers.clear()
            self._answers[remembered] = prediction
            out[at[0]] = Answer(prediction, cached=False)
            for i in at[1:]:
                out[i] = Answer(replace(prediction, predict_ms=0.0), cached=True)
        answered = [a for a in out if a is not None]
        assert len(answered) == len(questions)  # every question got its answer or error
        return answered

    def predict(
        self,
        key: str,
        kernel: str | Mapping[str, Any],
        problem: Mapping[str, Any],
        device: DeviceDescription,
    ) -> Answer:
        """A size for the scenario that the store has not seen refused for it; ``key`` names
        the question (the request as canonical JSON). Blocking (compiles, reads the store)."""
        found = self.scenario(key, kernel, problem, device)
        if not self.compiled(found):
            self.prepare(found)
        return self.answer(key, found, self.refused(found))

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
        no later answer proposes it for this kernel and device. Only a plausible refusal
        counts (Implausible), within the rate (RateLimited) and size limits (KernelRefusalsFull,
        RefusalsFull)."""
        found = self.scenario(key, kernel, problem, device)
        wc, wr = wg
        config = Config.of(wc=wc, wr=wr)
        found.spec.check_config(config, "wg")
        self._check_plausible(found, (wc, wr))
        self.gate.take(found.device.fingerprint)
        with self._write:
            known = self.refused(found)
            if (wc, wr) in known:
                return RefusalStored(False, (wc, wr))
            self._check_room(found, len(known))
            try:
                added = self._store_refusal(found, config, message)
            except (sqlite3.OperationalError, DatabaseLocked) as exc:
                if "locked" not in str(exc):
                    raise
                raise ServiceBusy(
                    f"the daemon's database {self.db} is locked by another process (a perfport "
                    f"import or tune, or an SQLite session) for over {LOCK_WAIT_S:g} s; the "
                    "refusal was not stored: retry in a while"
                ) from None
        return RefusalStored(added, (wc, wr))

    def _check_plausible(self, found: Scenario, wg: tuple[int, int]) -> None:
        spec, device = found.spec, found.device
        wc_legal, wr_legal = legal_sizes(spec, found.problem, device)
        if not any(
            int(a) == wg[0] and int(b) == wg[1] for a, b in zip(wc_legal, wr_legal, strict=True)
        ):
            raise Implausible(
                f"wg {wg[0]}x{wg[1]} is outside what {spec.name} allows on this device "
                f"(max work-group {device.max_work_group_size}, its local memory); a refusal "
                "counts only for a size the device's limits allow"
            )
        if not self.gate.was_asked(spec.source_hash, device.fingerprint):
            raise Implausible(
                f"no prediction was asked for {spec.name} on this device; a refusal counts "
                "only from a launcher that asks POST /v1/wg/predict first"
            )

    def _check_room(self, found: Scenario, known: int) -> None:
        limits = self.gate.limits
        if known >= limits.per_kernel_and_device:
            raise KernelRefusalsFull(
                f"this device already has {known} refused sizes of {found.spec.name} stored, "
                "the most the daemon keeps for one kernel and device; this one was not stored, "
                "and retrying will not store it: the launcher should stop reporting refusals "
                "of this kernel on this device (the daemon's operator can remove old ones: "
                "docs/wg.md says how)"
            )
        # Counted at every refusal (under the write lock): other processes store them too.
        with self._reading():
            reader = self._reader()
            reported = 0 if reader is None else count_outcomes_of_strategy(reader, REPORTED)
        if reported >= limits.total:
            raise RefusalsFull(
                f"the daemon's database holds {reported} client-reported refusals, the most it "
                "stores (--max-refusals); this one was not stored, and retrying will not store "
                "it: the daemon's operator must remove old ones (docs/wg.md says how) or "
                "restart it with a larger --max-refusals"
            )

    def _store(self) -> Store:
        """The daemon's write connection (call under ``self._write``). When the file changed
        since the daemon's last write (another process wrote, replaced or damaged it), it is
        opened afresh, which checks it again: a damaged database is still refused, while the
        daemon's own refusals pay a stat, not a check of the whole file."""
        if self._writer is not None and file_state(self.db) != self._written:
            self._writer.close()
            self._writer = None
        if self._writer is None:
            self._writer = Store(self.db, shared=True, lock_timeout_s=LOCK_WAIT_S)
        return self._writer

    def _store_refusal(self, found: Scenario, config: Config, message: str) -> bool:
        spec, device_info = found.spec, found.device
        store = self._store()
        try:
            with store.atomic():
                ids = (
                    store.device_id(device_info),
                    store.kernel_id(spec),
                    store.problem_id(found.problem),
                )
                name = (
                    f"reported-refusals-{device_info.fingerprint}-{spec.source_hash[:16]}-{ids[2]}"
                )
                report = PruningReport(0, 0, ())
                campaign = store.open_campaign(name, ids, REPORTED, 0, {}, report, spec.describe())
                note = f"reported by a client: {message[:MESSAGE_KEPT]}".strip()
                added = store.record(campaign, Measurement(config, Outcome.LAUNCH_REFUSED, note))
        except BaseException:
            store.close()  # the next write opens (and checks) the file again
            self._writer = None
            raise
        self._written = file_state(self.db)
        return added

    def close(self) -> None:
        """Close the write connection (a later refusal opens it again)."""
        with self._write:
            if self._writer is not None:
                self._writer.close()
                self._writer = None


def compiles_kernels(model: WgModel) -> bool:
    """Whether ``model`` needs kernels' instruction counts: one trained on the compile-free
    features ('wg train --compile-free') compiles nothing (no PoCL, no llvmlite)."""
    return not set(model.feature_names) <= set(COMPILE_FREE_FEATURES)
