"""Exhaustive sweeps over many problems: every legal configuration at every problem, in this
process.

Data sets like Lawson's (640 matmul configurations at hundreds of GEMM shapes) are dominated
by per-trial costs, not kernel time, if each trial goes through tune()'s worker round trip and
each problem rebuilds every program. A sweep keeps one device session and one build cache for
all problems (problem values that are kernel arguments, not ``-D`` defines, share builds),
verifies each (build, configuration) pair once, on the first problem where it runs, and stores
each problem as its own campaign as soon as it is done: an interrupted sweep resumes at the
problem where it stopped and never measures a stored configuration again.

With ``rounds`` > 1 every configuration of a problem is measured once per round, the later
rounds in a fresh random order each, and its stored samples are those of all rounds. Slow
drifts of the machine (clock, other tenants, the runtime's thread pool) then reach every
configuration alike instead of whichever happened to run during them: on CPUs, where most
configurations are within the run-to-run noise of the best, this decides whether the fastest
one is reproducible. A problem is stored when all its rounds are done.

Several sweeps of one store share the work as ``tune`` processes do: each claims the
configurations it measures in the store (a chunk at a time, one commit), passes over those
another sweep holds, and at the end of the problem waits until they are stored (or their claims
lapse, and measures them). What each reports is read from the store: its own count of results
stored, and the problem's outcomes and best over every writer's results.

There is no watchdog: a hung kernel hangs the sweep and a crash ends it (after the stored
problems are safe). Sweep kernels whose configurations tune() has already run safely.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn

from perfport._core import (
    Config,
    DeviceInfo,
    KernelSpec,
    Measurement,
    Outcome,
    PerfportError,
    Problem,
)
from perfport._core.interrupts import guarded, interruptible, take_held
from perfport.devices import get_device, open_session
from perfport.kernels import resolve_kernel
from perfport.measure import RunSettings, Timing, TrialEngine
from perfport.measure.data import reference_outputs
from perfport.space import ConstraintSource, Space, kernel_space
from perfport.store import Campaign, CampaignStatus, ClaimState, Store, campaign_settings
from perfport.store.writers import writer_id
from perfport.tune.checks import resolve_problem
from perfport.tune.lease import LEASE_S, Lease
from perfport.tune.loop import POLL_S
from perfport.tune.resume import check_resumable
from perfport.tune.tune import campaign_key

# Launches totalling about 3 ms, at least 3 and at most 20, median: the samples needed to rank
# configurations. At least 3 because a single launch lets one delayed launch stand as the
# time (NVIDIA OpenCL on an H100 delayed about 1 in 800 un-warmed single launches by ~4 ms);
# it costs 3 launches where a configuration lasts 1 ms or more, 1.5x the old sweep's time on
# the largest GEMM shapes (docs/results/2026-11-23-lawson-gemm-recheck.md).
SWEEP_TIMING = Timing(warmup=0, min_repeats=3, max_repeats=20, target_s=0.003)
_CHUNK = 64  # configurations claimed, and their results committed, together


class Gold(Enum):
    """What a sweep checks outputs against. NUMPY: the kernel's numpy reference (else the
    default configuration). DEFAULT_CONFIG: the default configuration's output, for problems
    where the reference costs more than the sweep (a 61x61-cell stencil at 4096^2 in numpy)
    and the reference itself is tested at small sizes."""

    NUMPY = "numpy"
    DEFAULT_CONFIG = "default_config"


@dataclass(frozen=True)
class SweepProgress:
    """One problem done (or interrupted: ``status``; see SweepInterrupted): how many
    configurations this sweep measured and stored now (0 when all were stored, or another sweep
    measured them), and the outcome counts and fastest time over every result the store holds
    for the problem."""

    problem: Problem
    campaign: str
    measured: int
    outcomes: dict[str, int]
    best_ms: float | None
    seconds: float
    status: CampaignStatus = CampaignStatus.COMPLETE


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a sweep. ``progress``: the problem it stopped in, as stored
    (status INTERRUPTED), for a caller that reports it as the others (``sweep --json``)."""

    def __init__(self, progress: SweepProgress) -> None:
        super().__init__()
        self.progress = progress


def _checked_problems(
    spec: KernelSpec, problems: Sequence[Mapping[str, Any]], dev: DeviceInfo
) -> list[Problem]:
    """Every problem resolved, and refused with its number and values where no launch can use
    it (n=-5), before the store is opened or any problem measured (431 problems' spaces: well
    under a second; each is enumerated again when measured)."""
    resolved = []
    for number, given in enumerate(problems, 1):
        try:
            resolved.append(resolve_problem(spec, given))
            kernel_space(spec, resolved[-1], dev)
        except PerfportError as exc:  # which of hundreds
            shown = ", ".join(f"{k}={v!r}" for k, v in dict(given).items())[:200]
            raise PerfportError(f"problem {number} of {len(problems)} ({shown}): {exc}") from None
    return resolved


def sweep(
    kernel: KernelSpec | str | Path,
    problems: Sequence[Mapping[str, Any]],
    *,
    device: DeviceInfo | str | None = None,
    db: str | Path = "perfport.db",
    settings: RunSettings | None = None,
    max_seconds: float | None = None,
    gold: Gold = Gold.NUMPY,
    rounds: int = 1,
) -> Iterator[SweepProgress]:
    """Measure every legal configuration of ``kernel`` at each of ``problems`` (in order) and
    store them; yields after each problem. Starts no problem after ``max_seconds``. ``gold``
    says what outputs are checked against (without a numpy reference: the default config).
    ``rounds`` measures each configuration that many times, interleaved (module docstring)."""
    if rounds < 1:
        raise PerfportError(f"a sweep needs at least 1 round, got {rounds}")
    spec = resolve_kernel(kernel)
    settings = settings or RunSettings(timing=SWEEP_TIMING)
    if settings.verify and (spec.verify is not None or spec.reference_kernel is not None):
        raise PerfportError(
            f"kernel {spec.name}: a sweep checks outputs against a numpy reference or the "
            "default configuration only; use 'perfport tune' for a verify function or a "
            "reference kernel, or sweep with --no-verify"
        )
    dev = device if isinstance(device, DeviceInfo) else get_device(device, spec.language)
    resolved = _checked_problems(spec, problems, dev)
    started = time.monotonic()
    session = open_session(dev)
    builds: dict[Any, Any] = {}
    verified: set[tuple[Any, Config]] = set()
    try:
        with Store(db) as store:
            device_id, kernel_id = store.device_id(dev), store.kernel_id(spec)
            for problem in resolved:
                if max_seconds is not None and time.monotonic() - started >= max_seconds:
                    return
                began = time.monotonic()
                space = kernel_space(spec, problem, dev)
                # One round keeps the key of sweeps made before rounds existed, so they resume.
                protocol = "sweep" if rounds == 1 else f"sweep/rounds={rounds}"
                key = campaign_key(spec, problem, dev, space, protocol, settings)
                check_resumable(store, key, space)
                ids = (device_id, kernel_id, store.problem_id(problem))
                job = _Problem(store, TrialEngine(session, spec, problem, settings, builds),
                               list(space), rounds, gold, verified)  # fmt: skip
                with guarded():  # the campaign says running only while the try below runs
                    campaign = store.open_campaign(
                        key,
                        ids,
                        "brute_force",
                        settings.seed,
                        campaign_settings(asdict(settings), spec),
                        space.report,
                        spec.describe(),
                    )
                    status = job.run_campaign(campaign)
                    done = _progress(store, campaign, problem, space, job.added, status)
                    interrupted = take_held() or status is CampaignStatus.INTERRUPTED
                done = dataclasses.replace(done, seconds=time.monotonic() - began)
                if interrupted:
                    raise SweepInterrupted(done)  # the campaign is stored as interrupted
                yield done
    finally:
        session.close()


def _progress(
    store: Store,
    campaign: Campaign,
    problem: Problem,
    space: Space,
    added: int,
    status: CampaignStatus,
) -> SweepProgress:
    """The problem as the store holds it, whoever measured it (another sweep of the store may
    have measured some or all of it)."""
    stored = store.measurements(campaign)
    times = [m.time_ms for m in stored if m.time_ms is not None]
    counts = Counter(m.outcome.value for m in stored)
    counts[Outcome.PRUNED.value] += space.report.removed(ConstraintSource.DEVICE)
    outcomes = {o.value: counts[o.value] for o in Outcome}
    return SweepProgress(
        problem, campaign.key, added, outcomes, min(times) if times else None, 0.0, status
    )


@dataclass
class _Problem:
    """One problem of a sweep: its configurations claimed, measured and stored as one campaign
    (which other sweeps of the store may be measuring too)."""

    store: Store
    engine: TrialEngine
    configs: list[Config]
    rounds: int
    gold: Gold
    verified: set[tuple[Any, Config]]  # (build, configuration) pairs checked, sweep-wide
    writer: str = field(default_factory=writer_id)  # this sweep, in the store's claims
    pending: list[Measurement] = field(default_factory=list)  # measured, not yet stored
    added: int = 0  # results this sweep stored

    def run_campaign(self, campaign: Campaign) -> CampaignStatus:
        """Run the campaign (inside the caller's guard) and store how it ended."""
        status = CampaignStatus.FAILED
        try:
            with Lease(self.store, campaign, self.writer), interruptible():
                self.run(campaign)
            status = CampaignStatus.COMPLETE
        except KeyboardInterrupt:
            status = CampaignStatus.INTERRUPTED
        finally:
            if take_held():
                status = CampaignStatus.INTERRUPTED
            self.stop(campaign, status)
        return status

    def run(self, campaign: Campaign) -> None:
        """Measure what the campaign does not hold and no other writer claims; then wait for
        what others claim: stored by them, or measured here once their claims lapse."""
        engine, spec, problem = self.engine, self.engine.spec, self.engine.problem
        stored = {m.config for m in self.store.measurements(campaign)}
        todo = [c for c in self.configs if c not in stored]
        if engine.settings.verify and any((self._build(c), c) not in self.verified for c in todo):
            _set_gold(engine, spec, problem, engine.settings, self.configs, self.gold)
        while todo:
            held = self._measure(campaign, todo)
            if len(held) == len(todo):  # all of them another writer's: wait for it
                time.sleep(POLL_S)
            todo = held

    def _measure(self, campaign: Campaign, todo: list[Config]) -> list[Config]:
        """Claim, measure and store ``todo`` a chunk at a time; those another writer holds."""
        engine, session = self.engine, self.engine.session
        held: list[Config] = []
        for start in range(0, len(todo), _CHUNK):
            with self.store.atomic():  # the chunk's claims in one commit
                states = {c: self.store.claim(campaign, c, self.writer, LEASE_S)
                          for c in todo[start : start + _CHUNK]}  # fmt: skip
            held += [c for c, state in states.items() if state is ClaimState.HELD]
            for config in (c for c, state in states.items() if state is ClaimState.CLAIMED):
                build = self._build(config)
                check = (build, config) not in self.verified
                m = engine.run(config, verify=check)
                if check and engine.expected is not None and m.ok:
                    self.verified.add((build, config))
                self.pending.append(m)
                if not session.healthy:
                    if self.rounds == 1:
                        self._flush(campaign)
                    _lost(self.store, campaign, session.device, f" at {config} ({m.message})")
            if self.rounds == 1:
                self._flush(campaign)
        if self.rounds > 1:
            self.pending = _more_rounds(engine, self.pending, self.rounds, engine.settings.seed)
            if not session.healthy:  # nothing of this problem is stored
                _lost(self.store, campaign, session.device)
            self._flush(campaign)
        return held

    def _build(self, config: Config) -> tuple[tuple[str, str], ...]:
        spec, problem = self.engine.spec, self.engine.problem
        return tuple(spec.build_defines(spec.env(config, problem)).items())

    def stop(self, campaign: Campaign, status: CampaignStatus) -> None:
        """Store the campaign's final status; an interrupted single round keeps what it
        measured (whole rounds only are stored with rounds > 1). Claims left unstored go back
        to the other writers."""
        if status is CampaignStatus.INTERRUPTED and self.rounds == 1:
            self._flush(campaign)
        self.store.set_status(campaign, status)
        self.store.release_claims(campaign, self.writer)

    def _flush(self, campaign: Campaign) -> None:
        self.added += self.store.record_many(campaign, self.pending)
        self.pending = []


def _more_rounds(
    engine: TrialEngine, first: list[Measurement], rounds: int, seed: int
) -> list[Measurement]:
    """Rounds 2..``rounds`` over the configurations that ran in round 1, each round in its own
    seeded random order; each result carries the samples of every round, round by round. A
    configuration that fails in a later round keeps that failure: it is not reliable."""
    merged = {m.config: m for m in first}
    for r in range(1, rounds):
        order = [c for c, m in merged.items() if m.ok]
        random.Random(seed * 1_000_003 + r).shuffle(order)
        for config in order:
            m = engine.run(config, verify=False)
            before = merged[config]
            merged[config] = (
                dataclasses.replace(before, times_ms=before.times_ms + m.times_ms, stats=None)
                if m.ok
                else m
            )
            if not engine.session.healthy:
                return list(merged.values())
    return list(merged.values())


def _lost(store: Store, campaign: Campaign, dev: DeviceInfo, where: str = "") -> NoReturn:
    store.set_status(campaign, CampaignStatus.FAILED)
    raise PerfportError(
        f"the device context on {dev.id} was lost{where}; run the sweep again to resume after it"
    )


def _set_gold(
    engine: TrialEngine,
    spec: KernelSpec,
    problem: Problem,
    settings: RunSettings,
    configs: Sequence[Config],
    gold: Gold,
) -> None:
    if gold is Gold.NUMPY and spec.reference is not None:
        engine.use_expected(reference_outputs(spec, problem, settings.seed), "numpy reference")
    elif spec.default is not None and spec.default in configs:
        m = engine.run(spec.default, capture=True, verify=False)
        if m.ok and engine.captured is not None:
            engine.use_expected(engine.captured, f"reference configuration {spec.default}")
