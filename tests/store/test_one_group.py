"""one_group: the rows of exactly one device/kernel/problem, or an error naming the choices."""

import pytest

from perfport import Config, Measurement, Outcome, builtin
from perfport._core import StoreError
from perfport.space import kernel_space
from perfport.store import Store
from perfport.store.queries import one_group


def test_many_matches_are_named_whole_then_counted(db, cpu):
    # The list was cut at 600 characters, mid-name and mid-hint, in a store of many problems.
    spec = builtin("vector_add")
    with Store(db) as store:
        for n in range(1000, 1030):
            problem = spec.problem.merged({"n": n})
            ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(problem))
            report = kernel_space(spec, problem, cpu).report
            campaign = store.open_campaign(f"c{n}", ids, "brute_force", 0, {}, report)
            store.record(campaign, Measurement(Config.of(wg=64), Outcome.OK, times_ms=(1.0,)))
        with pytest.raises(StoreError) as info:
            one_group(store, kernel="vector_add", problem={})
    text = str(info.value)
    assert text.startswith("30 device/kernel/problem combinations match (")
    shown = text.split("(", 1)[1].rsplit(")", 1)[0].split("; ")
    assert len(shown) == 6 and shown[-1] == "and 25 more"
    assert shown[:5] == [f"vector_add on {cpu.name} (dtype=float n={n})" for n in range(1000, 1005)]
    assert text.endswith("narrow it with --kernel, --device and --problem")
