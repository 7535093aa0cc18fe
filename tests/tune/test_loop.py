"""The tuning loop: its own checks of what a strategy hands it, and what it tells one."""

import pytest

from perfport import RunSettings, Timing, tune
from perfport.store import Store
from perfport.strategies import Strategy, StrategyError

FAST = RunSettings(timing=Timing.fixed(2))


class _ListsPlan(Strategy):
    """A fixed order whose items are lists, not configuration numbers."""

    name, summary = "lists_plan", "plans lists"

    def ask(self) -> int | None:
        return None

    def plan(self):
        return [[0], [1]]


def test_a_malformed_plan_is_one_line_before_anything_is_measured(db):
    """The loop counted the plan (set(plan)) before checking it: a raw TypeError
    'unhashable type: list'. It is asked once now, checked, and only then used."""
    with pytest.raises(StrategyError, match=r"strategy lists_plan: plan\(\) holds \[0\], not"):
        tune("vector_add", problem={"n": 4096}, strategy=_ListsPlan, budget=4, db=db,
             settings=FAST)  # fmt: skip
    with Store(db) as store:
        assert store.query("SELECT count(*) FROM results")[0][0] == 0


class _Logged(Strategy):
    """Adaptive: the untold configuration nearest (in number) to the best told so far, or the
    first (the last with ``reverse``: another start, as a new prior gives) while nothing is
    told; logs its asks and tells into ``log``."""

    name, summary = "logged_nearest", "nearest to the best, logged"
    reverse = False
    log: list[tuple[str, int]]

    def ask(self) -> int | None:
        order = range(len(self.space))[:: -1 if self.reverse else 1]
        untold = [i for i in order if i not in self.told]
        if not untold:
            return None
        best = self.best
        pick = min(untold, key=lambda i: abs(i - best[0])) if best else untold[0]
        self.log.append(("ask", pick))
        return pick

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        self.log.append(("tell", index))


class _Steady:
    """A runner with times fixed by the configuration (no noise): a resumed search can be
    compared with an uninterrupted one; logs what it measures."""

    def __init__(self, space, log) -> None:
        self.space, self.log = space, log

    def measure(self, config):
        from perfport import Measurement, Outcome

        i = self.space.index(config)
        self.log.append(("measure", i))
        return Measurement(config, Outcome.OK, times_ms=(1.0 + abs(i - 7) * 0.1,))


def _session(db, cpu, budget: int, reverse: bool = False) -> list[tuple[str, int]]:
    """One session of a vector_add campaign under ``_Logged``: its log."""
    from perfport import Budget, builtin
    from perfport.space import kernel_space
    from perfport.tune.loop import TuningLoop
    from perfport.tune.progress import Progress

    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 4096})
    space = kernel_space(spec, problem, cpu)
    log: list[tuple[str, int]] = []
    strategy = type("Run", (_Logged,), {"reverse": reverse, "log": log})(space, 0)
    with Store(db) as store:
        ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(problem))
        campaign = store.open_campaign("c", ids, _Logged.name, 0, {}, space.report)
        loop = TuningLoop(space, strategy, _Steady(space, log), store, campaign,  # type: ignore[arg-type]
                          Budget(budget), Progress())  # fmt: skip
        loop.run(None, "logged")
    return log


def test_a_resume_where_nothing_changed_asks_as_one_uninterrupted_run(tmp_path, cpu):
    """The stored results are replayed in order, answering the same asks: the resumed session
    asks and is told exactly what one run of the whole budget is (no result told early)."""
    whole = _session(tmp_path / "whole.db", cpu, 8)
    _session(tmp_path / "split.db", cpu, 4)
    resumed = _session(tmp_path / "split.db", cpu, 8)
    assert [e for e in resumed if e[0] != "measure"] == [e for e in whole if e[0] != "measure"]
    assert [e for e in resumed if e[0] == "measure"] == [e for e in whole if e[0] == "measure"][4:]


def test_a_resume_whose_asks_changed_tells_every_stored_result_first(tmp_path, cpu):
    """A changed start (another device's results imported: a new prior) asks for configurations
    not stored: every earlier result is told before the first new measurement (they were never
    told, yet counted against the budget), and none twice."""
    first = _session(tmp_path / "c.db", cpu, 4)
    stored = {i for kind, i in first if kind == "measure"}
    later = _session(tmp_path / "c.db", cpu, 8, reverse=True)
    before = later[: later.index(next(e for e in later if e[0] == "measure"))]
    assert stored <= {i for kind, i in before if kind == "tell"}
    told = [i for kind, i in later if kind == "tell"]
    assert len(told) == len(set(told)) == 8
