"""``perfport split``'s decision on stand-in timings (the GPU run's CPU+GPU convolution,
n=2^26): a split is chosen only when a verified split beats the best single device by more
than the margin, and the JSON names the split that was chosen."""

from __future__ import annotations

import dataclasses

from perfport._core import Backend, DeviceInfo, DeviceType
from perfport.split.execute import RunResult
from perfport.split.plan import plan_split
from perfport.split.rebalance import Iteration
from perfport.split.split import DECISION_MARGIN, SplitOutcome

EXTENT = 1 << 26


def _device(name: str) -> DeviceInfo:
    return DeviceInfo(
        f"test:{name}", Backend.OPENCL, name, "v", DeviceType.GPU, "1", "p", "1.2",
        1, 1024, (1024, 1024, 1024), 1 << 16, 1 << 30,
    )  # fmt: skip


def _run(wall_ms: float, *kernel_ms: float) -> RunResult:
    return RunResult(wall_ms, kernel_ms, 3, 0.0, 0.0, {})


def _outcome(planned_ms: float, launches: list[tuple[tuple[int, int], float]]) -> SplitOutcome:
    plan = plan_split(["gpu", "cpu"], EXTENT, [512, 64], [11.081, 2012.24])
    run = _run(planned_ms, 10.78, 13.99)
    later = [
        Iteration(((0, a), (a, EXTENT)), _run(ms, 10.8, 10.6), 0.02, True)
        for (a, _), ms in launches
    ]
    iterations = (Iteration(plan.parts, run, 0.3, True), *later)
    return SplitOutcome(
        plan=plan,
        devices=(_device("gpu"), _device("cpu")),
        configs=({"wg": 512}, {"wg": 64}),
        config_sources=("store", "store"),
        single=(_run(11.081, 10.9), _run(2012.24, 2011.0)),
        run=run,
        verified=True,
        mismatch=None,
        iterations=iterations,
    )


def test_a_rebalanced_launch_within_noise_of_the_best_device_keeps_that_device():
    # the GPU run: planned 14.49 ms, rebalanced launches 11.05 and 11.28, the GPU alone 11.08
    out = _outcome(14.49, [((66847232, 0), 11.05), ((66809344, 0), 11.28)])
    assert out.decision == "test:gpu"
    j = out.to_json()
    assert j["decision"] == "test:gpu" and j["chosen_ms"] == 11.05
    assert j["chosen_parts"] == [[0, 66847232], [66847232, EXTENT]]


def test_a_split_clearly_faster_than_the_best_device_is_chosen_and_named():
    out = _outcome(14.49, [((60000000, 0), 11.081 * (1 - 2 * DECISION_MARGIN))])
    assert out.decision == "split"
    assert out.to_json()["chosen_parts"] == [[0, 60000000], [60000000, EXTENT]]
    wrong = dataclasses.replace(
        out,
        verified=False,
        iterations=tuple(dataclasses.replace(i, verified=False) for i in out.iterations),
    )
    assert wrong.decision == "test:gpu" and wrong.to_json()["chosen_parts"] is None
