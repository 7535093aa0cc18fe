"""One session of one campaign: ask -> claim -> measure -> store -> tell.

Several sessions (processes, machines sharing the database) may write one campaign at once.
Each claims a configuration in the store before measuring it, so none is measured twice and
the budget holds for all of them together. A strategy whose order is fixed walks its plan and
passes over what another writer holds, coming back to it; an adaptive one must be told each
asked configuration before it asks again, so it waits for the other writer's result (two
adaptive writers with one seed therefore take turns: they gain nothing over one, and lose
nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import islice

from perfport._core import Config, KernelSpec, Measurement, Problem
from perfport.measure import Runner
from perfport.space import Space
from perfport.store import Campaign, CampaignStatus, ClaimState, Store
from perfport.store.writers import writer_id
from perfport.strategies import Strategy, checked_ask, checked_plan
from perfport.tune.lease import LEASE_S
from perfport.tune.prebuild import Prebuild
from perfport.tune.progress import Progress
from perfport.tune.result import Budget

POLL_S = 0.1  # how often a writer waiting on another one looks at the store again


class _Step(Enum):
    DONE = "done"  # measured here or by another writer, and told to the strategy
    HELD = "held"  # another writer is measuring it
    SPENT = "spent"  # the campaign's budget is used up


@dataclass
class TuningLoop:
    """One session of one campaign. (Not a devices.Session, the device context a Runner
    holds.) ``writer`` names this session in the store's claims."""

    space: Space
    strategy: Strategy
    runner: Runner
    store: Store
    campaign: Campaign
    budget: Budget
    progress: Progress
    writer: str = field(default_factory=writer_id)
    lease_s: float = LEASE_S
    started: float = field(default_factory=time.monotonic)
    measured_here: int = 0  # trials this session ran and stored (another writer's excluded)
    # what the strategy is told of a result, lower is better (default: its time)
    score: Callable[[Measurement], float | None] | None = None
    # Results stored instead of a trial: what crashed or hung in earlier campaigns.
    reuse: Mapping[Config, Measurement] = field(default_factory=dict)
    # Called before each ask of an adaptive strategy (tune_many: the prior from other devices'
    # results that landed meanwhile).
    before_ask: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self.stored: dict[Config, Measurement] = {}
        self._seen = 0  # id of the last stored result read
        self._told_upto = 0  # how many of ``stored`` (in order) _tell_stored has looked at
        self._refresh()

    def run(
        self, default: Config | None, description: str, compiled_first: Prebuild | None = None
    ) -> CampaignStatus:
        """Measure until done or out of budget; ``compiled_first``: builds to wait for (within
        the time budget) before the first trial. Then wait for the configurations other
        writers were measuring, so the campaign's results are final when this returns."""
        status = CampaignStatus.FAILED
        # Asked once and checked before anything uses it: a malformed plan of a user's
        # strategy is one line (StrategyError), not a TypeError from counting it.
        plan = checked_plan(self.strategy)
        self.progress.start(self._total(default, plan), len(self.stored), description)
        try:
            if compiled_first is not None:
                compiled_first.wait(self.budget.max_seconds)
            i = None if default is None else self.space.index(default)
            if i is not None and self._evaluate(i) is _Step.SPENT:  # the baseline first
                status = CampaignStatus.BUDGET
            else:
                status = self._ask() if plan is None else self._walk(plan)
            self._settle()
        except KeyboardInterrupt:
            status = CampaignStatus.INTERRUPTED
        finally:
            # Other writers may have stored results since this one's last update: the last
            # line shows the campaign's count and best as the session ends, not stale ones.
            self.progress.recount(len(self.stored), self._best_ms())
            self.progress.stop()
        return status

    def _total(self, default: Config | None, plan: Sequence[int] | None) -> int:
        """How many results the campaign will hold when this session ends, within the budget:
        those stored and those a fixed ``plan`` (a list's only its own configurations) or, for
        a strategy choosing as it goes (None), the whole space may still add."""
        if plan is None:
            total = len(self.space)
        else:
            wanted = set(plan)
            first = None if default is None else self.space.index(default)
            if first is not None:
                wanted.add(first)  # measured first, as the baseline
            stored = (self.space.index(c) for c in self.stored)
            total = len(wanted) + sum(i is None or i not in wanted for i in stored)
        return min(total, self.budget.max_evals or total)

    def _out_of_budget(self) -> bool:
        self._refresh()  # other writers' results count
        if self.budget.max_evals is not None and len(self.stored) >= self.budget.max_evals:
            return True
        elapsed = time.monotonic() - self.started
        return self.budget.max_seconds is not None and elapsed >= self.budget.max_seconds

    def _ask(self) -> CampaignStatus:
        """An adaptive strategy: ask, and tell each answer before asking again."""
        while not self._out_of_budget():
            if self.before_ask is not None:
                self.before_ask()
            index = checked_ask(self.strategy)  # a bad answer of a user's strategy: one line
            if index is None:
                return CampaignStatus.COMPLETE
            if self.space.config(index) not in self.stored:
                self._tell_stored(but=index)
            if self._evaluate(index) is _Step.SPENT:
                return CampaignStatus.BUDGET
        return CampaignStatus.BUDGET

    def _tell_stored(self, but: int) -> None:
        """Tell the strategy every stored result it was not told (earlier sessions' it did not
        ask for again, as after its prior or objective changed; other writers'), in the order
        stored, before it learns from a new measurement. Called once an ask names a
        configuration not stored: while the asks replay the stored results in order (a resume
        where nothing changed) nothing is left to tell here, so the strategy reaches the state
        one uninterrupted run would. ``but``: the asked one, told by ``_evaluate``."""
        self._refresh()
        for config, m in islice(self.stored.items(), self._told_upto, None):
            i = self.space.index(config)  # None: outside the space (a listed configuration)
            if i is not None and i != but and i not in self.strategy.told:
                self._tell(i, m)
        self._told_upto = len(self.stored)

    def _walk(self, plan: Sequence[int]) -> CampaignStatus:
        """A fixed order: the next planned configuration nobody holds; those another writer
        held are tried again at each step (its claim may lapse) and waited for at the end."""
        waiting: list[int] = []
        for index in [*plan, None]:  # None: the end, where the held ones are waited for
            if self._out_of_budget():
                return CampaignStatus.BUDGET
            steps = [(i, self._evaluate(i, wait=index is None)) for i in waiting]
            if any(step is _Step.SPENT for _, step in steps):
                return CampaignStatus.BUDGET
            waiting = [i for i, step in steps if step is _Step.HELD]
            if index is None or index in self.strategy.told:
                continue
            step = self._evaluate(index, wait=False)
            if step is _Step.SPENT:
                return CampaignStatus.BUDGET
            if step is _Step.HELD:
                waiting.append(index)
        return CampaignStatus.COMPLETE

    def _settle(self) -> None:
        """Wait until the claims other writers hold now are stored or lapse (not for claims
        they take later: a writer with a larger budget may go on for long)."""
        pending = self.store.live_claims(self.campaign, other_than=self.writer)
        while pending & self.store.live_claims(self.campaign, other_than=self.writer):
            time.sleep(POLL_S)
        self._refresh()

    def planned_builds(self, spec: KernelSpec, problem: Problem) -> list[dict[str, str]]:
        """The define sets of the configurations the strategy will ask for within the budget
        and the store does not hold yet, each once, in the strategy's order."""
        return planned_builds(spec, problem, self.space, self.strategy, self.stored, self.budget)

    def measure_outside(self, config: Config) -> None:
        """A configuration outside the device's space: the runner reports why, unbuilt (no
        trial runs, so it is not claimed)."""
        self._refresh()
        if config not in self.stored:
            self.store.record(self.campaign, self.runner.measure(config))
            self._refresh()

    def _evaluate(self, index: int, wait: bool = True) -> _Step:
        """Measure the configuration unless stored (by any writer), and tell it. ``wait``:
        while another writer holds it, wait for its result; else return HELD."""
        config = self.space.config(index)
        self._refresh()
        while config not in self.stored:
            state = self.store.claim(
                self.campaign, config, self.writer, self.lease_s, self.budget.max_evals
            )
            if state is ClaimState.CLAIMED:
                self._measure(config)
            elif state is ClaimState.SPENT:
                return _Step.SPENT
            elif state is ClaimState.HELD and not wait:
                return _Step.HELD
            elif state is not ClaimState.STORED:  # held, or the budget booked by claims
                time.sleep(POLL_S)
            self._refresh()
        self._tell(index, self.stored[config])
        return _Step.DONE

    def _tell(self, index: int, m: Measurement) -> None:
        self.strategy.tell(index, m.time_ms if self.score is None else self.score(m))

    def _measure(self, config: Config) -> None:
        reused = self.reuse.get(config)
        try:
            m = reused or self.runner.measure(config)
        except BaseException:
            self.store.release_claims(self.campaign, self.writer, config)
            raise
        self.measured_here += reused is None
        self.store.record(self.campaign, m)  # ends the claim
        self._refresh()
        self.progress.update(len(self.stored), m, self._best_ms())

    def _best_ms(self) -> float | None:
        return min((s.time_ms for s in self.stored.values() if s.time_ms is not None), default=None)

    def _refresh(self) -> None:
        """Read the results stored since the last look (this writer's and the others')."""
        for m, rid in self.store.measurements_after(self.campaign, self._seen):
            self.stored.setdefault(m.config, m)
            self._seen = rid


def planned_builds(
    spec: KernelSpec,
    problem: Problem,
    space: Space,
    strategy: Strategy,
    stored: Collection[Config],
    budget: Budget,
) -> list[dict[str, str]]:
    """The define sets of the configurations ``strategy`` (a fixed order) will ask for within
    ``budget``, leaving out the ``stored`` ones, each once, in its order."""
    left = None if budget.max_evals is None else budget.max_evals - len(stored)
    fresh = [c for c in map(space.config, checked_plan(strategy) or ()) if c not in stored]
    builds: dict[tuple[tuple[str, str], ...], None] = {}
    for config in fresh[: None if left is None else max(0, left)]:
        builds.setdefault(tuple(spec.build_defines(spec.env(config, problem)).items()))
    return [dict(b) for b in builds]
