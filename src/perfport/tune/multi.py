"""One campaign per kind of device, measured on many devices at once.

Each slot (a local device with its own worker process, or a Dask worker's device) runs a
session of its kind's campaign in a thread of this process: the driver. Slots of one kind
(equal fingerprints) share the campaign and spread its configurations through the store's
claims, so none is measured twice and the budget holds for them together. Only the driver
writes the store; workers only measure. Bad input that a session meets only once it runs (the
spec's reference, a strategy of the user's own) stops every session, as it is every session's
input; a device's own failure stops only that device's session. With ``confirm_top``, the last
session of a kind to end its search re-times the campaign's best side by side on its device,
as a one-device ``tune`` does (``perfport.tune.confirm``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from perfport._core import (
    DeviceInfo,
    DeviceType,
    KernelSpec,
    Measurement,
    PerfportError,
    Problem,
    SpecError,
)
from perfport._core.errors import SettingsError
from perfport._core.interrupts import interruptible
from perfport.kernels import resolve_kernel
from perfport.measure import Runner, RunSettings
from perfport.space import Space
from perfport.store import Campaign, CampaignStatus, Store, campaign_settings
from perfport.store.writers import writer_id
from perfport.strategies import PriorGuided, Strategy, StrategyError
from perfport.tune.checks import (
    _buildable,
    _checked_budget,
    _checked_confirm_top,
    _chosen_strategy,
    _legal_space,
    resolve_problem,
)
from perfport.tune.confirm import DEFAULT_SECONDS, Confirmation, Measures, confirm_campaign
from perfport.tune.heeding import Heeding, Stoppable
from perfport.tune.lease import LEASE_S, Lease
from perfport.tune.loop import TuningLoop, planned_builds
from perfport.tune.prebuild import Prebuild, PrebuildError
from perfport.tune.prior import LivePrior, Prior, SkippedSource, newest_result, sourced_prior
from perfport.tune.progress import Board, Progress
from perfport.tune.result import Budget, Stage, TuneResult
from perfport.tune.resume import check_resumable
from perfport.tune.stopping import final_status
from perfport.tune.tune import (
    _campaign_label,
    _searcher,
    _verification_warnings,
    campaign_key,
)

# A session's status, most telling first: the campaign's is the first any session had.
_RANK = (
    CampaignStatus.INTERRUPTED,
    CampaignStatus.FAILED,
    CampaignStatus.BUDGET,
    CampaignStatus.COMPLETE,
)

# Errors of the user's input, which every session shares (the spec's reference or reference
# kernel, a strategy of their own, the settings, compiling processes that cannot start): one
# session's stops them all. Anything else (a worker that cannot start on its device, a lost
# Dask worker) is that device's own and stops only its session.
INPUT_ERRORS = (SpecError, StrategyError, SettingsError, PrebuildError)


class Measurer(Protocol):
    """What a session measures with: a local Runner, or a Dask worker's (``tune.cluster``)."""

    verification: str
    reference_note: str

    def measure(self, config: Any) -> Measurement: ...


@dataclass(frozen=True)
class Slot:
    """Where one session's trials run: ``device`` names the kind (its fingerprint picks the
    campaign); ``label`` names the slot in progress lines."""

    device: DeviceInfo
    label: str


# The stop event of the session running in this thread: a measurer that waits on trials
# elsewhere (a Dask worker's, which may never answer) asks stop_requested() between waits.
_this_session = threading.local()


def stop_requested() -> bool:
    """Whether the driver has asked the session running in this thread to stop (Ctrl-C,
    SIGTERM, or another session's input error); false outside a session."""
    stop = getattr(_this_session, "stop", None)
    return stop is not None and stop.is_set()


# Opens a slot's measurer for a kernel and problem: a context manager (closed at the end).
MakeMeasurer = Callable[[KernelSpec, Problem, Slot, RunSettings], AbstractContextManager[Measurer]]


def local_measurer(
    spec: KernelSpec, problem: Problem, slot: Slot, settings: RunSettings
) -> AbstractContextManager[Measurer]:
    """A Runner on the slot's device: its own crash-proof worker process."""
    return Runner(spec, problem, slot.device, settings)


@dataclass
class _Kind:
    """One campaign: its slots, space and store record, and what its sessions ended with."""

    slots: list[Slot]
    space: Space
    key: str
    budget: Budget  # the call's, a share of the space made a count of this kind's space
    record: Campaign | None = None
    prior: Prior | None = None
    prior_seen: int = -1  # the newest result's id when ``prior`` was read
    prior_skipped: tuple[SkippedSource, ...] = ()  # other devices' results it left out
    statuses: list[CampaignStatus] = field(default_factory=list)
    verification: str = "(no trial ran this session)"
    note: str = ""
    measured_here: int = 0
    interrupted: bool = False  # Ctrl-C (or SIGTERM) reached this call while the campaign ran
    searched: int = 0  # sessions whose search has ended (or that failed)
    lock: threading.Lock = field(default_factory=threading.Lock)
    confirmed: Confirmation | None = None
    confirm_stopped: bool = False  # Ctrl-C stopped the re-timing

    def search_ended(self) -> bool:
        """Count one session's search as ended; whether it was the kind's last."""
        with self.lock:
            self.searched += 1
            return self.searched == len(self.slots)


@dataclass(frozen=True)
class _Run:
    """What every session of one call shares."""

    spec: KernelSpec
    problem: Problem
    settings: RunSettings
    strategy_type: type[Strategy]
    budget: Budget  # as given: a share of the space is resolved per kind (``_Kind.budget``)
    make: MakeMeasurer
    stop: threading.Event  # every session stops after its trial in flight
    lease_s: float
    # set with ``stop`` when a session met an input error: the stopped sessions end failed
    failed: threading.Event = field(default_factory=threading.Event)
    confirm_top: int = 0
    confirm_seconds: float = DEFAULT_SECONDS


def tune_many(
    kernel: KernelSpec | str | Path,
    slots: Sequence[Slot],
    *,
    problem: Mapping[str, Any] | None = None,
    strategy: str | type[Strategy] | None = None,
    budget: Budget | int | None = None,
    db: str | Path = "perfport.db",
    settings: RunSettings | None = None,
    board: Board | None = None,
    min_work_groups: bool = False,
    make_measurer: MakeMeasurer = local_measurer,
    lease_s: float = LEASE_S,
    build_jobs: int = 0,
    confirm_top: int = 0,
    confirm_seconds: float = DEFAULT_SECONDS,
) -> list[TuneResult]:
    """Tune ``kernel`` on every slot at once: one campaign per kind of device (slots with one
    fingerprint share it), in the order the kinds first appear. Results are stored as they
    arrive; the same call again resumes. Ctrl-C stops every session after its trial in flight
    (status ``interrupted``; a campaign whose search had ended, or ends with nothing left to
    measure, keeps its status). A fixed-order strategy (brute force, random, grid) spreads best:
    an adaptive one asks for one configuration at a time, so its slots take turns.
    ``build_jobs`` >= 1 compiles every campaign's builds its budget reaches ahead, in that many
    processes shared by all of them (``perfport.tune.prebuild``), into each backend's compile
    cache, where the slots' workers find them; sessions on a CPU wait for them first (the
    compiles would disturb their timings). It needs a fixed-order strategy, as ``tune``'s.
    ``confirm_top`` >= 2 (0: off) re-times that many of each campaign's best side by side for
    at most ``confirm_seconds``, on the device of the kind's last session to end its search
    (``TuneResult.confirmed``)."""
    if not slots:
        raise PerfportError("no device to tune on; give at least one --device")
    spec = resolve_kernel(kernel)
    the_problem = resolve_problem(spec, problem)
    settings = settings or RunSettings()
    strategy_type, _ = _chosen_strategy(spec, the_problem, strategy, None, build_jobs)
    _checked_confirm_top(confirm_top)
    run = _Run(
        spec, the_problem, settings, strategy_type, _checked_budget(budget), make_measurer,
        threading.Event(), lease_s, confirm_top=confirm_top, confirm_seconds=confirm_seconds,
    )  # fmt: skip
    kinds = _kinds(run, slots, min_work_groups)
    for kind in kinds:
        _buildable(strategy_type, kind.space, settings.seed)
    board = board or Board()
    with Store(db) as store:
        for kind in kinds:
            _open(store, run, kind)
        errors: list[BaseException] = []
        ahead = _prebuild(store, run, kinds, build_jobs) if build_jobs else None
        try:
            with board:
                _run_sessions(store, run, kinds, board, errors, ahead)
        finally:
            if ahead is not None:
                ahead.close()
        for kind in kinds:
            assert kind.record is not None
            status = next((s for s in _RANK if s in kind.statuses), CampaignStatus.FAILED)
            final, held = final_status(store, kind.record, status)
            kind.statuses, kind.interrupted = [final], kind.interrupted or held
        results = [_result(store, run, kind, str(db)) for kind in kinds]
    if errors:  # an input error first: it is why the others stopped
        raise next((e for e in errors if isinstance(e, INPUT_ERRORS)), errors[0])
    return results


def _kinds(run: _Run, slots: Sequence[Slot], min_work_groups: bool) -> list[_Kind]:
    """The slots grouped by fingerprint, each group with its space and campaign key."""
    groups: dict[str, list[Slot]] = {}
    for slot in slots:
        groups.setdefault(slot.device.fingerprint, []).append(slot)
    label = _campaign_label(run.strategy_type, None)
    kinds = []
    for members in groups.values():
        dev = members[0].device
        space = _legal_space(run.spec, run.problem, dev, min_work_groups)
        key = campaign_key(run.spec, run.problem, dev, space, label, run.settings)
        kinds.append(_Kind(members, space, key, run.budget.resolved(len(space))))
    return kinds


def _open(store: Store, run: _Run, kind: _Kind) -> None:
    dev = kind.slots[0].device
    settings = campaign_settings(asdict(run.settings), run.spec)
    store.check_campaign_key(
        kind.key,
        dev,
        run.spec.source_hash,
        run.problem,
        run.strategy_type.name,
        settings,
        kernel_name=run.spec.name,
    )
    check_resumable(store, kind.key, kind.space)
    ids = (store.device_id(dev), store.kernel_id(run.spec), store.problem_id(run.problem))
    kind.record = store.open_campaign(
        kind.key, ids, run.strategy_type.name, run.settings.seed, settings,
        kind.space.report, run.spec.describe(),
    )  # fmt: skip
    if run.strategy_type.takes_prior:
        kind.prior_seen = newest_result(store)
        kind.prior, kind.prior_skipped = sourced_prior(
            store, run.spec.name, kind.space, dev.fingerprint, dict(run.problem)
        )


def _prebuild(store: Store, run: _Run, kinds: list[_Kind], jobs: int) -> Prebuild:
    """One pool compiling each campaign's planned builds (those its budget reaches and the
    store does not hold), for its kind's device: the slots of a kind share one compile cache."""
    plans = []
    for kind in kinds:
        assert kind.record is not None
        searcher = _searcher(run.strategy_type, None, kind.space, run.settings.seed, kind.prior)
        stored = {m.config for m in store.measurements(kind.record)}
        builds = planned_builds(run.spec, run.problem, kind.space, searcher, stored, kind.budget)
        plans.append((kind.slots[0].device, builds))
    return Prebuild.for_devices(run.spec, plans, jobs)


def _run_sessions(
    store: Store,
    run: _Run,
    kinds: list[_Kind],
    board: Board,
    errors: list[BaseException],
    ahead: Prebuild | None = None,
) -> None:
    """A thread per slot; Ctrl-C (here, in the main thread) asks each to stop. A session
    that stops reports its own status (interrupted, or what its search ended with: a campaign
    that had nothing left to measure is not interrupted); one left running is interrupted."""
    ended: list[tuple[_Kind, threading.Event]] = []
    for kind in kinds:
        for slot in kind.slots:
            ended.append((kind, threading.Event()))
            args = (store, run, kind, slot, board.lane(slot.label), errors, ahead)
            threading.Thread(target=_ending, args=(ended[-1][1], *args), daemon=True,
                             name=f"perfport-{slot.label}").start()  # fmt: skip
    events = [event for _, event in ended]
    try:
        _wait(events)
    except KeyboardInterrupt:
        run.stop.set()
        if ahead is not None:
            ahead.close()  # a CPU session waiting for builds goes on once those compiling end
        for kind in kinds:
            kind.interrupted = True
        print("perfport: stopping after the trials in flight (Ctrl-C again leaves them)",
              file=board.stream, flush=True)  # fmt: skip
        # A second Ctrl-C leaves them (daemon threads): a trial on a Dask worker that was lost
        # may never end. What the sessions stored stays; their claims lapse with their leases.
        with suppress(KeyboardInterrupt):
            _wait(events)
        for kind, event in ended:
            if not event.is_set():
                kind.statuses.append(CampaignStatus.INTERRUPTED)


def _ending(ended: threading.Event, *session: Any) -> None:
    try:
        _session(*session)
    finally:
        ended.set()


def _wait(ended: list[threading.Event]) -> None:
    """Until every session has ended. Events, not Thread.join: after a Ctrl-C interrupts a
    join, CPython 3.11 may call a running thread stopped, and the report would be built while
    it still stores (its count missing from measured_this_session)."""
    with interruptible():
        for event in ended:
            while not event.wait(0.2):  # short waits, so a signal is taken between them
                pass


def _session(
    store: Store,
    run: _Run,
    kind: _Kind,
    slot: Slot,
    lane: Progress,
    errors: list[BaseException],
    ahead: Prebuild | None = None,
) -> None:
    """One slot's session of its kind's campaign, on its own store connection and writer;
    on a CPU it first waits for the builds compiled ahead (``ahead``)."""
    assert kind.record is not None
    writer, status = writer_id(), CampaignStatus.FAILED
    loop: TuningLoop | None = None
    counted = False  # this session's end of search counted (kind.search_ended)
    _this_session.stop = run.stop
    with store.twin() as own:
        try:
            with run.make(run.spec, run.problem, slot, run.settings) as measurer:
                with Lease(own, kind.record, writer, run.lease_s):
                    searcher = _searcher(
                        run.strategy_type, None, kind.space, run.settings.seed, kind.prior
                    )
                    heeding = Heeding(measurer, run.stop)
                    loop = TuningLoop(
                        kind.space, searcher, heeding, own, kind.record, kind.budget,  # type: ignore[arg-type]
                        Stoppable(lane, run.stop), writer, run.lease_s,
                        before_ask=_live_prior(own, run, kind, searcher),
                    )  # fmt: skip
                    first = ahead if slot.device.type is DeviceType.CPU else None
                    status = loop.run(run.spec.default, f"{run.spec.name} on {slot.label}", first)
                    counted = True
                    if kind.search_ended() and status is not CampaignStatus.INTERRUPTED:
                        _confirm(own, run, kind, heeding)
                if loop.measured_here:  # a slot that ran nothing must not blank another's
                    kind.verification = measurer.verification
                    kind.note = measurer.reference_note if run.settings.verify else ""
        except INPUT_ERRORS as exc:  # every session would meet it: stop them all
            errors.append(exc)
            run.failed.set()
            run.stop.set()
            if ahead is not None:
                ahead.close()  # a CPU session waiting for builds goes on to its stop
        except Exception as exc:  # reported by the driver once every session has ended
            errors.append(exc)
        finally:
            if not counted:  # so that another session of the kind can be its last
                kind.search_ended()
            if status is CampaignStatus.INTERRUPTED and run.failed.is_set():
                status = CampaignStatus.FAILED  # stopped by another session's input error
            own.release_claims(kind.record, writer)
            kind.measured_here += loop.measured_here if loop else 0
            kind.statuses.append(status)


def _confirm(store: Store, run: _Run, kind: _Kind, measurer: Measures) -> None:
    """Re-time the kind's best side by side (``run.confirm_top`` of them, 0: off); a Ctrl-C
    keeps the samples taken so far and the campaign's status (``tune.stopping``)."""
    if run.confirm_top < 2:
        return
    assert kind.record is not None
    try:
        kind.confirmed = confirm_campaign(
            store, kind.record, measurer, run.confirm_top, run.confirm_seconds,
            run.settings.seed,
        )  # fmt: skip
    except KeyboardInterrupt:
        kind.confirm_stopped = True


def _live_prior(
    store: Store, run: _Run, kind: _Kind, searcher: Strategy
) -> Callable[[], None] | None:
    """For the prior strategy: before each ask, the prior again from the other devices'
    results stored since (their campaigns run beside this one), so a device that started
    with little or no prior picks up the others' best configurations as they land."""
    if not isinstance(searcher, PriorGuided):
        return None
    device = kind.slots[0].device
    live = LivePrior(
        store, run.spec.name, kind.space, device.fingerprint, dict(run.problem),
        seen=kind.prior_seen,
    )  # fmt: skip

    def refresh() -> None:
        prior = live.fresh()
        if prior is not None:
            kind.prior = prior
            searcher.rescore(prior.scores)

    return refresh


def _result(store: Store, run: _Run, kind: _Kind, db: str) -> TuneResult:
    assert kind.record is not None
    measurements = store.measurements(kind.record)
    by_config = {m.config: m for m in measurements}
    verification = kind.verification if run.settings.verify else "not verified"
    default = run.spec.default
    status = kind.statuses[0]
    stopped = status is CampaignStatus.INTERRUPTED
    return TuneResult(
        campaign=kind.key,
        status=status,
        device=kind.slots[0].device,
        kernel=run.spec.name,
        problem=run.problem,
        strategy=run.strategy_type.name,
        space=kind.space.report,
        measurements=tuple(measurements),
        default=by_config.get(default) if default is not None else None,
        verification=verification,
        db=db,
        prior_sources=kind.prior.sources if kind.prior else 0,
        prior_skipped=kind.prior_skipped,
        measured_here=kind.measured_here,
        warnings=_verification_warnings(
            measurements, run.settings.verify, kind.verification, kind.note
        ),
        interrupted=(
            Stage.SEARCH if stopped
            else Stage.CONFIRM if kind.confirm_stopped
            else Stage.END if kind.interrupted
            else None
        ),
        confirmed=kind.confirmed,
    )  # fmt: skip
