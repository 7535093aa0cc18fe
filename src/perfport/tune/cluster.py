"""Trials on Dask workers (``perfport[cluster]``): the driver keeps the store, workers measure.

A perfport worker (``perfport worker``, each worker of ``--cluster local``, or a plain
``dask worker --preload perfport.tune.cluster``) is a Dask worker per device, advertising the device as a worker resource named after its fingerprint
(``resource_name``) and listing its device id in ``PERFPORT_WORKER_DEVICES``. The driver asks
every worker for its perfport version and devices, makes a slot per worker device, and sends
each trial to a worker of the slot's kind. A worker lost mid-trial: Dask's scheduler gives the
trial to another worker of that kind; after ``distributed.scheduler.allowed-failures`` losses
it is recorded as crashed.

A trial carries the spec pickled by value where it must be (``spec_payload``): a Python spec
file's module has a made-up name that no worker can import. The driver waits on a trial in
short waits: a trial that raises on the worker or scheduler ends the campaign with a one-line
error, and once the driver is asked to stop it leaves a trial that has not answered within
``STOP_GRACE_S``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import pickle
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from perfport._core import (
    Config,
    DeviceInfo,
    KernelSpec,
    Measurement,
    Outcome,
    PerfportError,
    Problem,
)
from perfport._core.optional import require
from perfport._core.version import __version__
from perfport.kernels.loader import user_modules
from perfport.measure import Runner, RunSettings
from perfport.tune.multi import Slot, stop_requested

ENV_DEVICES = "PERFPORT_WORKER_DEVICES"  # the device ids a worker process measures on
CONNECT_S = 10.0  # reaching the scheduler; with WORKERS_S, errors come within 30 s
WORKERS_S = 15.0  # waiting for a first worker to join
# Dask's INFO lines per worker event would bury the progress lines.
_QUIET = {"DASK_LOGGING__DISTRIBUTED": "warning"}
# Run in each worker process that a nanny of perfport's starts: a terminal's Ctrl-C reaches
# the whole process group, and the nanny, which takes it, stops its worker in order (the
# worker's own KeyboardInterrupt printed tracebacks, and the nanny "died unexpectedly").
_IGNORE_CTRL_C = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)"

RETRIES = 2  # losses of a worker during one trial before it is recorded as crashed
POLL_S = 0.2  # the driver's waits on a trial, between which it checks for a stop
STOP_GRACE_S = 10.0  # how long a trial in flight may still take once the driver must stop


def resource_name(device: DeviceInfo) -> str:
    """The Dask worker resource a device of this kind is advertised as."""
    return "perfport-" + hashlib.sha256(device.fingerprint.encode()).hexdigest()[:16]


def _distributed() -> Any:
    return require("distributed", "cluster", "perfport on Dask (--cluster, perfport worker)")


# ---- on the worker ----------------------------------------------------------------------
_RUNNER: dict[tuple[Any, ...], Runner] = {}  # one Runner (worker process) kept between trials


def _own_devices() -> list[DeviceInfo]:
    from perfport.devices import get_device

    ids = [i for i in os.environ.get(ENV_DEVICES, "").split(",") if i]
    return [get_device(i) for i in ids]


def describe_worker() -> tuple[str, tuple[DeviceInfo, ...]]:
    """This worker's perfport version and devices (run on every worker by the driver)."""
    return __version__, tuple(_own_devices())


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: ``dask worker ADDRESS --preload perfport.tune.cluster`` (as
    dask-jobqueue starts workers) serves the devices in ``PERFPORT_WORKER_DEVICES``, by
    default this machine's default device, advertising each before the worker registers."""
    if not os.environ.get(ENV_DEVICES):
        from perfport.devices import get_device

        os.environ[ENV_DEVICES] = get_device(None).id
    for device in _own_devices():
        name = resource_name(device)
        worker.state.total_resources[name] = worker.state.available_resources[name] = 1


def remote_trial(
    payload: bytes, problem: Problem, fingerprint: str, settings: RunSettings, config: Config
) -> tuple[Measurement, str, str]:
    """Measure ``config`` on this worker's device of the given kind, for the spec pickled in
    ``payload`` (``spec_payload``); the Runner and its worker process stay for the next trial
    of the same kernel, problem and settings."""
    try:
        spec = pickle.loads(payload)
    except Exception as exc:  # e.g. a module the spec's functions import, missing here
        raise PerfportError(
            f"a worker cannot load the kernel spec ({type(exc).__name__}: {exc}); install "
            "what the spec's functions import on every worker"
        ) from None
    key = (spec.name, spec.source_hash, problem.key, fingerprint, repr(settings))
    runner = _RUNNER.get(key)
    if runner is None:
        for old in _RUNNER.values():
            old.close()
        _RUNNER.clear()
        device = next((d for d in _own_devices() if d.fingerprint == fingerprint), None)
        if device is None:
            raise PerfportError(f"this worker has no device of kind {fingerprint}")
        runner = _RUNNER[key] = Runner(spec, problem, device, settings)
    return runner.measure(config), runner.verification, runner.reference_note


# ---- on the driver ----------------------------------------------------------------------
def spec_payload(spec: KernelSpec) -> bytes:
    """``spec`` pickled for the workers. The functions of files perfport imported (a Python
    spec, a data spec's reference file) go by value: their modules' names exist only in this
    process. Dask's own pickling would send them by reference whatever cloudpickle is told, as
    the spec itself is perfport's; functions of installed modules stay by reference."""
    cloudpickle = require("cloudpickle", "cluster", "perfport on Dask (--cluster)")
    for module in user_modules():
        cloudpickle.register_pickle_by_value(module)
    try:
        payload: bytes = cloudpickle.dumps(spec)
    except Exception as exc:  # e.g. a reference holding an open file or a lock
        raise PerfportError(
            f"kernel {spec.name} cannot be sent to Dask workers ({type(exc).__name__}: "
            f"{exc}); keep what its functions use picklable, or tune it without --cluster"
        ) from None
    return payload


class DaskMeasurer:
    """A slot's measurer: each trial goes to a Dask worker advertising the slot's kind."""

    def __init__(
        self, client: Any, spec: KernelSpec, problem: Problem, slot: Slot, settings: RunSettings
    ) -> None:
        self.client, self.spec, self.problem = client, spec, problem
        self.slot, self.settings = slot, settings
        self.verification, self.reference_note = "(no trial ran this session)", ""
        self.payload = spec_payload(spec)

    def __enter__(self) -> DaskMeasurer:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def measure(self, config: Config) -> Measurement:
        dist = _distributed()
        future = self.client.submit(
            remote_trial, self.payload, self.problem, self.slot.device.fingerprint,
            self.settings, config, resources={resource_name(self.slot.device): 1}, pure=False,
        )  # fmt: skip
        _wait_for(dist, future)
        try:
            m, self.verification, self.reference_note = future.result()
        except dist.KilledWorker as exc:
            return Measurement(config, Outcome.CRASHED, f"Dask workers died running it ({exc})")
        except PerfportError:
            raise
        except Exception as exc:  # the scheduler's or worker's: e.g. a task it cannot unpickle
            raise PerfportError(
                f"the Dask cluster could not run a trial of {self.spec.name} on "
                f"{self.slot.label} ({_cause(exc)}); install the same perfport, and what the "
                "spec imports, on the scheduler and every worker"
            ) from None
        return m


def _wait_for(dist: Any, future: Any) -> None:
    """Until ``future`` is done; once this session is asked to stop, at most ``STOP_GRACE_S``
    more, then KeyboardInterrupt (the session ends interrupted). A task a worker cannot even
    receive is never done, and a plain ``result()`` is deaf to the driver's stop."""
    leave_at = None
    while True:
        try:
            dist.wait(future, timeout=POLL_S)
            return
        except TimeoutError:
            pass
        if stop_requested():
            now = time.monotonic()
            leave_at = leave_at or now + STOP_GRACE_S
            if now >= leave_at:
                with suppress(Exception):  # the scheduler may be gone too
                    future.cancel()
                raise KeyboardInterrupt


def _cause(exc: BaseException) -> str:
    """``exc`` and the root of its causes, in one line."""
    root = exc
    while root.__cause__ is not None:
        root = root.__cause__
    first = " ".join(str(exc).split(". ")[0].split())
    text = f"{type(exc).__name__}: {first}"
    if root is not exc:
        text += f", from {type(root).__name__}: {' '.join(str(root).split())}"
    return text[:400]


def cluster_slots(client: Any, only: Sequence[str] = ()) -> list[Slot]:
    """A slot per device of every perfport worker (those whose id or fingerprint is in
    ``only``, when given); an error naming the worker when one runs another perfport."""
    described = client.run(describe_worker)
    slots: list[Slot] = []
    for address, (version, devices) in sorted(described.items()):
        if version != __version__:
            raise PerfportError(
                f"worker {address} runs perfport {version}, this driver {__version__}; "
                "install the same version on every node"
            )
        for d in devices:
            if not only or d.id in only or d.fingerprint in only:
                slots.append(Slot(d, f"{d.id}@{address.rsplit('/', 1)[-1]}"))
    if not slots:
        which = f" of {', '.join(only)}" if only else ""
        raise PerfportError(
            f"no worker on the cluster serves a usable device{which}; start one with "
            "'perfport worker --scheduler ADDRESS --device ID'"
        )
    return slots


@contextmanager
def connect(address: str, local_devices: Sequence[DeviceInfo] = ()) -> Iterator[Any]:
    """A Dask client of the scheduler at ``address``, or of a local cluster with one worker
    process per device in ``local_devices`` when ``address`` is ``local``."""
    dist = _distributed()
    if address == "local":
        with local_cluster(local_devices) as cluster, dist.Client(cluster) as client:
            yield client
        return
    try:
        client = _client(dist, address)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise PerfportError(
            f"cannot reach a Dask scheduler at --cluster {address} "
            f"({str(exc) or 'no answer within %g s' % (2 * CONNECT_S)}); give its address "
            "(tcp://HOST:8786), or 'local'"
        ) from None
    with client:
        try:
            client.wait_for_workers(1, timeout=WORKERS_S)
        except TimeoutError:
            raise PerfportError(
                f"no worker joined the scheduler at {address} within {WORKERS_S:g} s; start "
                "one with 'perfport worker --scheduler ADDRESS'"
            ) from None
        yield client


def _client(dist: Any, address: str) -> Any:
    """``dist.Client(address)`` once the address has answered Dask's identity call within
    ``2 * CONNECT_S``: against a server that accepts the connection but never speaks Dask (a web
    server) the constructor waits far past its own timeout, deaf to Ctrl-C."""

    async def identity() -> None:
        async with dist.rpc(address, timeout=CONNECT_S) as scheduler:
            await scheduler.identity()

    asyncio.run(asyncio.wait_for(identity(), 2 * CONNECT_S))
    return dist.Client(address, timeout=f"{CONNECT_S}s")


@contextmanager
def local_cluster(
    devices: Sequence[DeviceInfo], env: dict[str, str] | None = None
) -> Iterator[Any]:
    """A cluster on this machine: a scheduler and one worker process (with a nanny that
    restarts it) per device, each advertising its device's kind; ``env`` is added to each
    worker's environment (e.g. POCL_MAX_PTHREAD_COUNT)."""
    dist = _distributed()
    import dask

    if not devices:
        raise PerfportError("a local cluster needs at least one --device")
    workers = {
        f"perfport-{n}": {
            "cls": dist.Nanny,
            "options": {
                "nthreads": 1,
                "resources": {resource_name(d): 1},
                "env": {**_QUIET, **(env or {}), ENV_DEVICES: d.id},
                "preload": [_IGNORE_CTRL_C],
                "dashboard": False,
            },
        }
        for n, d in enumerate(devices)
    }
    scheduler = {"cls": dist.Scheduler, "options": {"dashboard": False}}
    with _inherited(_QUIET):  # a worker process sets up its logging before a nanny's env
        with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES}):
            cluster = dist.SpecCluster(workers=workers, scheduler=scheduler, silence_logs=40)
        with cluster:
            yield cluster


@contextmanager
def _inherited(env: dict[str, str]) -> Iterator[None]:
    """``env`` in this process's environment while inside (so processes started here inherit
    it), where the user has not set those variables; as it was afterwards."""
    before = {k: os.environ.get(k) for k in env}
    os.environ.update({k: v for k, v in env.items() if before[k] is None})
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def serve(address: str, devices: Sequence[DeviceInfo]) -> None:
    """Serve ``devices`` to the scheduler at ``address`` until it closes or Ctrl-C: a worker
    process (with a nanny that restarts it) per device. An error within ``CONNECT_S`` * 2
    seconds when the scheduler cannot be reached."""
    dist = _distributed()
    logging.getLogger("distributed").setLevel(logging.WARNING)  # its INFO lines per event

    async def run() -> None:
        nannies = [
            dist.Nanny(
                address,
                nthreads=1,
                resources={resource_name(d): 1},
                dashboard=False,
                env={**_QUIET, ENV_DEVICES: d.id},
                preload=[_IGNORE_CTRL_C],
                name=f"perfport-{os.getpid()}-{n}",
            )
            for n, d in enumerate(devices)
        ]
        try:
            await asyncio.wait_for(asyncio.gather(*nannies), 2 * CONNECT_S)
        except (OSError, TimeoutError, ValueError, RuntimeError) as exc:  # Dask's, per cause
            await asyncio.gather(*(n.close(timeout=5) for n in nannies), return_exceptions=True)
            raise PerfportError(
                f"cannot reach a Dask scheduler at --scheduler {address} "
                f"({str(exc) or 'no answer within %g s' % (2 * CONNECT_S)}); "
                "give its address, e.g. tcp://HOST:8786"
            ) from None
        await asyncio.gather(*(n.finished() for n in nannies))

    with _inherited(_QUIET):  # a worker process sets up its logging before a nanny's env
        asyncio.run(run())
