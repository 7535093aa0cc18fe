"""``--plan lines``: the first split planned from each device's overhead + cost line, fitted
through its time alone and one probe on its Eq. 4 part. Times are modelled (a device with a
fixed cost per launch), so what is asserted does not depend on the machine's load; the parts
really run on two PoCL sub-devices and are verified."""

from __future__ import annotations

import dataclasses
import json
import types

import pytest

from perfport._core import Check, Config, Problem, SpecError
from perfport.devices import get_device
from perfport.kernels import builtin
from perfport.split import probe as probe_module
from perfport.split import rebalance as rebalance_module
from perfport.split import split as split_module
from perfport.split.execute import RunResult
from perfport.split.plan import plan_split
from perfport.split.probe import check_plan, plan_from_lines
from perfport.split.rebalance import balanced_finish, rebalance
from perfport.split.split import split_run
from tune.cli_in_process import run_cli

TWO = ["--device", "opencl:0:0.0", "--device", "opencl:0:0.1"]
EXTENT = 40000
# The first sub-device stands in for a GPU (no fixed cost), the second for a CPU beside it:
# 1.5 ms a launch + 4e-4 ms an element (17.5 ms alone), as the Xeon's small parts measured.
MODEL = {"opencl:0:0.0": (0.0, 1e-4), "opencl:0:0.1": (1.5, 4e-4)}

# Every output passes (the fakes return none): the specs here are stand-ins.
ANY_OUTPUT = types.SimpleNamespace(
    of=lambda *a: types.SimpleNamespace(mismatch=lambda *a: None, check=lambda *a: Check.VERIFIED)
)


def modelled_ms(line: tuple[float, float], elements: int) -> float:
    return line[0] + line[1] * elements


def test_a_line_plan_gives_the_device_with_a_fixed_cost_fewer_elements_than_eq4():
    lines = list(MODEL.values())
    eq4 = plan_split(list(MODEL), EXTENT, [64, 64], [modelled_ms(x, EXTENT) for x in lines])
    probes = [modelled_ms(x, b - a) for x, (a, b) in zip(lines, eq4.parts, strict=True)]
    planned = plan_from_lines(eq4, probes)
    for got, want in zip(planned.lines, lines, strict=True):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9)
    size = [[b - a for a, b in p.parts] for p in (eq4, planned.plan)]
    assert size[1][1] < size[0][1] and sum(size[1]) == EXTENT
    split_ms = [max(modelled_ms(x, n) for x, n in zip(lines, s, strict=True)) for s in size]
    balanced = balanced_finish(EXTENT, lines)  # 3.5 ms
    assert split_ms[0] > 1.2 * balanced  # Eq. 4: the fixed cost makes the small part late
    assert split_ms[1] == pytest.approx(balanced, rel=0.02)  # one work-group's rounding
    assert planned.predicted_ms == pytest.approx(split_ms[1])
    # Eq. 4's meaning is kept beside the plan that ran
    assert planned.eq4 is eq4 and planned.plan.split_factors != eq4.split_factors


def test_a_device_whose_overhead_exceeds_the_balanced_time_gets_nothing():
    lines = [(0.0, 1e-4), (5.0, 1e-5)]  # the second's launch alone outlasts the first's 4 ms
    eq4 = plan_split(["gpu", "cpu"], EXTENT, [64, 8], [modelled_ms(x, EXTENT) for x in lines])
    assert eq4.parts[1][1] > eq4.parts[1][0]  # Eq. 4 gives it a share
    probes = [modelled_ms(x, b - a) for x, (a, b) in zip(lines, eq4.parts, strict=True)]
    planned = plan_from_lines(eq4, probes)
    assert planned.plan.parts == ((0, EXTENT), (EXTENT, EXTENT))
    assert planned.predicted_ms == pytest.approx(4.0)


def test_a_device_with_an_empty_eq4_part_is_not_probed_and_stays_proportional():
    eq4 = plan_split(["a", "b"], 1000, [1000, 1000], [1.0, 50.0])
    assert eq4.parts[1] == (1000, 1000)
    planned = plan_from_lines(eq4, [1.0, None])
    assert planned.lines[1] == pytest.approx((0.0, 0.05)) and planned.probe_ms == (1.0, None)
    with pytest.raises(SpecError, match="one probe time"):
        plan_from_lines(eq4, [1.0])
    with pytest.raises(SpecError, match="eq4, lines"):
        check_plan("lines2")


def _modelled(real, calls: list[int]):
    def run(spec, problem, parts, split, **kw):
        done = real(spec, problem, parts, split, **kw)
        calls.append(len(parts))
        ms = tuple(
            modelled_ms(MODEL[p.device.id], p.stop - p.start) for p in parts if p.stop > p.start
        )
        return dataclasses.replace(done, kernel_ms=ms, wall_ms=max(ms))

    return run


def test_split_run_probes_the_parts_together_once_and_runs_the_lines_plan(monkeypatch):
    calls: list[int] = []
    real = split_module.run_parts
    monkeypatch.setattr(split_module, "run_parts", _modelled(real, calls))
    monkeypatch.setattr(probe_module, "run_parts", _modelled(real, calls))
    spec = builtin("convolution")
    devices = [get_device(d) for d in MODEL]
    configs = {d: Config.of(wg=64) for d in MODEL}
    outcomes = {
        how: split_run(
            spec,
            Problem.of(n=EXTENT, mask=65),
            devices,
            configs=configs,
            target_s=0.0,
            plan_from=how,
        )
        for how in ("eq4", "lines")
    }
    # eq4: two alone and the split; lines: two alone, the probe (both parts), the split
    assert calls == [1, 1, 2, 1, 1, 2, 2]
    eq4, lines = (outcomes[h].to_json() for h in ("eq4", "lines"))
    assert all(o.verified for o in outcomes.values())
    assert eq4["planned_from"] == "eq4" and eq4["probe_ms"] is None and eq4["lines"] is None
    assert eq4["eq4_parts"] == eq4["parts"] and lines["eq4_parts"] == eq4["parts"]
    assert lines["planned_from"] == "lines" and len(lines["probe_ms"]) == 2
    assert lines["lines"][1] == pytest.approx([1.5, 4e-4], rel=1e-6)
    assert lines["split_factors"] == eq4["split_factors"]  # Eq. 4's, with their meaning
    assert lines["theoretical_ms"] == eq4["theoretical_ms"]
    cpu = [p[1] - p[0] for p in (eq4["parts"][1], lines["parts"][1])]
    assert cpu[1] < cpu[0]
    assert lines["adjusted_factors"][1] == pytest.approx(cpu[1] / EXTENT)
    assert lines["measured_ms"] < eq4["measured_ms"]  # modelled, not timed
    assert lines["measured_ms"] == pytest.approx(3.5, rel=0.02)


def test_the_rebalancer_keeps_a_device_the_lines_dropped_dropped(monkeypatch):
    """Three devices; the lines dropped the third for its overhead. The first two are
    imbalanced, so the loop re-plans: from the given lines the third stays out; from lines
    proportional to its time alone it would get a share back."""
    model = {"a": (0.0, 1e-3), "b": (0.0, 2e-3), "c": (50.0, 1e-3)}

    def fake(spec, problem, parts, split, target_s, opener=None, group=None):
        ms = tuple(
            modelled_ms(model[p.device], p.stop - p.start) for p in parts if p.stop > p.start
        )
        return RunResult(max(ms), ms, 3, 0.0, 0.0, {})

    monkeypatch.setattr(rebalance_module, "run_parts", fake)
    monkeypatch.setattr(rebalance_module, "refusal", lambda *a: "")  # no spec to check
    monkeypatch.setattr(rebalance_module, "Comparison", ANY_OUTPUT)
    spec = types.SimpleNamespace(tolerance=None)
    alone = [modelled_ms(x, 1000) for x in model.values()]  # 1, 2 and 51 ms
    plan = plan_split(list(model), 1000, [10, 10, 10], alone, factors=(0.5, 0.5, 0.0))
    given = [(0.0, 1e-3), (0.0, 2e-3), (50.0, 1e-3)]
    for lines, third_gets in ((given, False), (None, True)):
        done, last = rebalance(spec, None, list(model), [None] * 3, None, plan, 2, {}, lines=lines)
        assert len(done) == 2
        assert (last.parts[2][1] > last.parts[2][0]) is third_gets, last.parts


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--plan", "bogus"], "--plan"), (["--plan", "lines", "--steps", "2"], "--plan")],
)
def test_a_bad_plan_is_one_line_and_writes_nothing(tmp_path, args, says, capfd):
    db = tmp_path / "r.db"
    done = run_cli(capfd, "split", "stencil", *TWO, *args, "--db", db)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert says in done.stderr and not db.exists()


def test_cli_plans_from_lines_on_two_sub_devices_and_rebalances(tmp_path, capfd):
    done = run_cli(
        capfd, "split", "convolution", *TWO, "--problem", "n=4096", "--plan", "lines",
        "--iterations", "2", "--db", tmp_path / "r.db", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["planned_from"] == "lines" and out["verified"] is True
    assert len(out["probe_ms"]) == 2 and all(t > 0 for t in out["probe_ms"])
    assert len(out["lines"]) == 2 and all(b > 0 for _, b in out["lines"])
    assert sum(b - a for a, b in out["eq4_parts"]) == 4096 == sum(b - a for a, b in out["parts"])
    assert out["iterations"][0]["parts"] == out["parts"]
    assert all(i["verified"] for i in out["iterations"])
    assert sum(out["split_factors"]) == pytest.approx(1.0)


def test_lines_go_through_the_device_time_alone_and_add_its_host_time():
    """The probe's part times are device times; so is the whole problem's point when given
    (``device_ms``); the host's share of the time alone (wall less kernel) is overhead the
    host sees on every launch, so it joins the line's overhead: a device whose launches the
    host notices late gets fewer elements."""
    eq4 = plan_split(["a", "b"], 1000, [10, 10], [2.0, 2.0])
    probes = [1.0, 1.0]
    walls = plan_from_lines(eq4, probes).lines
    kernels = plan_from_lines(eq4, probes, device_ms=[1.9, 1.9]).lines
    assert walls[0] == pytest.approx((0.0, 2e-3)) and kernels[0] == pytest.approx((0.2, 1.8e-3))
    slow_host = plan_from_lines(eq4, probes, device_ms=[1.9, 1.5]).plan.parts
    assert slow_host[1][1] - slow_host[1][0] < 500  # b's host time alone is 0.5 ms, a's 0.1


def test_a_device_with_no_measured_time_alone_gets_a_line_proportional_through_its_probe():
    """A model's time alone (the roofline's, several times too fast) is no point to fit a
    line through: the line through it is too shallow and plans the device far too much. With
    None for its time alone the line goes through its probe alone, with no host time."""
    gpu, cpu = (0.0, 1e-4), (0.2, 4e-4)  # real lines: 4 ms and 16.2 ms alone
    eq4 = plan_split(["gpu", "cpu"], EXTENT, [64, 64], [1.0, 5.0])  # a model's times
    probes = [modelled_ms(x, b - a) for x, (a, b) in zip((gpu, cpu), eq4.parts, strict=True)]
    fitted = plan_from_lines(eq4, probes, [4.0, 5.0], [4.0, 5.0])
    proportional = plan_from_lines(eq4, probes, [4.0, None], [4.0, None])
    elements = eq4.parts[1][1] - eq4.parts[1][0]
    assert proportional.lines[1] == pytest.approx((0.0, probes[1] / elements))
    size = [p.plan.parts[1][1] - p.plan.parts[1][0] for p in (fitted, proportional)]
    late = [modelled_ms(cpu, n) / modelled_ms(gpu, EXTENT - n) for n in size]
    assert late[0] > 1.2  # through the model's point the CPU ends long after the GPU
    assert 0.95 <= late[1] <= 1.0  # proportional: its fixed cost errs on the safe side
