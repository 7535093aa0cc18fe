"""Small things a new user meets in the first hour (issue 26 item 7)."""

import json

import pytest

from perfport._core import PerfportError
from perfport.tune import Budget
from tune.cli_in_process import run_cli


def test_budget_share_resolves_against_the_legal_space():
    assert Budget(fraction=0.25).resolved(8) == Budget(2)
    assert Budget(fraction=0.25).resolved(11) == Budget(3)  # rounded up
    assert Budget(fraction=0.01).resolved(5) == Budget(1)  # never nothing
    assert Budget(4, 9.0, fraction=1.0).resolved(100) == Budget(4, 9.0)  # the smaller
    assert Budget(7).resolved(3) == Budget(7)
    with pytest.raises(PerfportError, match="at most 100%"):
        Budget(fraction=1.5)


def test_cli_budget_percent(tmp_path, capfd):
    done = run_cli(capfd, "tune", "vector_add", "--problem", "n=4096", "--budget", "25%",
                    "--repeats", "2", "--confirm", "0", "--db", tmp_path / "r.db", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    legal = result["space"]["legal"]
    assert result["measured"] == -(-legal // 4) and result["status"] == "budget"
    for bad, why in (
        ("150%", "at most 100%"),
        ("abc%", "percentage such as 25%"),
        ("0", "at least 1"),
    ):
        refused = run_cli(capfd, "tune", "vector_add", "--budget", bad, "--db", tmp_path / "x.db")
        assert (
            refused.returncode == 2 and why in refused.stderr and "Traceback" not in refused.stderr
        )
    assert not (tmp_path / "x.db").exists()


def _wide_spec():
    from perfport._core import ArrayArg, KernelSpec, Param, ParamKind

    # 8192 work-items in a group exceeds every device's limit (PoCL's is 4096): pruned.
    return KernelSpec(
        name="wide", source="__kernel void wide(__global float* x) { x[get_global_id(0)] = 1.0f; }",
        entry="wide", params=(Param("bx", (64, 128, 8192), ParamKind.LAUNCH),),
        global_size=("n",), local_size=("bx",), problem={"n": 8192},
        args=(ArrayArg("x", "float", ("n",), output=True),),
    )  # fmt: skip


def test_configs_total_is_the_devices_legal_space(db, cpu):
    from perfport import RunSettings, Timing, tune
    from perfport.space import kernel_space

    spec = _wide_spec()
    legal = kernel_space(spec, spec.problem, cpu).report.legal
    r = tune(spec, budget=1, db=db, device=cpu, settings=RunSettings(timing=Timing.fixed(1)))
    j = r.to_json()
    assert legal == 2 and j["configs_total"] == legal == j["space"]["legal"]
    assert j["configs_before_device"] == 3 and j["pruned"] == 1


def test_compiler_warnings_go_into_the_result_not_the_terminal(db, cpu, capfd):
    from perfport import RunSettings, Timing, tune
    from perfport._core import ArrayArg, KernelSpec, Param, ParamKind

    spec = KernelSpec(
        name="chatty", entry="chatty",
        source="__kernel void chatty(__global float* x) {\n#warning hello_from_kernel\n"
               "  x[get_global_id(0)] = 1.0f;\n}",
        params=(Param("bx", (32, 64), ParamKind.LAUNCH),),
        global_size=("n",), local_size=("bx",), problem={"n": 1024},
        args=(ArrayArg("x", "float", ("n",), output=True),),
    )  # fmt: skip
    r = tune(spec, db=db, device=cpu, settings=RunSettings(verify=False, timing=Timing.fixed(1)))
    err = capfd.readouterr().err
    assert "hello_from_kernel" not in err and "CompilerWarning" not in err
    assert "warning generated" not in err  # the driver's own line on fd 2
    assert all(m.ok and "hello_from_kernel" in m.message for m in r.measurements)
    assert r.measurements[0].message.startswith("compiler output: ")


def _groups_spec(global_size):
    from perfport._core import ArrayArg, KernelSpec, Param, ParamKind

    return KernelSpec(
        name="groups", entry="groups",
        source="__kernel void groups(__global float* x) { x[get_global_id(0)] = 1.0f; }",
        params=(Param("bx", (64, 128), ParamKind.LAUNCH),),
        global_size=(global_size,), local_size=("bx",), problem={"n": 1000},
        args=(ArrayArg("x", "float", ("n",), output=True),),
    )  # fmt: skip


def test_work_items_not_groups_hint(db, cpu, tmp_path, capfd):
    from perfport import tune
    from perfport._core import SpecError
    from perfport.space import empty_space_hint, kernel_space

    # A grid of groups (Kernel Tuner's / CUDA's habit): no global size divides by bx.
    with pytest.raises(SpecError, match="global_size counts work-items, not work-groups") as info:
        tune(_groups_spec("ceil_div(n, bx)"), db=db, device=cpu)
    assert "\n" not in str(info.value) and not db.exists()
    # Empty for another reason (the kernel's own restriction): no hint.
    import dataclasses

    restricted = dataclasses.replace(_groups_spec("round_up(n, bx)"), restrictions=("bx > 500",))
    other = kernel_space(restricted, None, cpu)
    assert other.report.legal == 0 and empty_space_hint(other.report) == ""
    assert empty_space_hint(kernel_space(_groups_spec("n"), None, cpu).report)  # 1000 % bx
    spec = tmp_path / "groups.py"
    spec.write_text(
        "from perfport import ArrayArg, KernelSpec, Param, ParamKind\n"
        "kernel = KernelSpec(name='groups', entry='groups',\n"
        "    source='__kernel void groups(__global float* x) { x[get_global_id(0)] = 1.0f; }',\n"
        "    params=(Param('bx', (64, 128), ParamKind.LAUNCH),), global_size=('ceil_div(n, bx)',),\n"
        "    local_size=('bx',), problem={'n': 1000},\n"
        "    args=(ArrayArg('x', 'float', ('n',), output=True),))\n"
    )
    done = run_cli(capfd, "space", spec, "--json")
    assert done.returncode == 0 and "hint: global_size counts work-items" in done.stderr
    assert json.loads(done.stdout)["legal"] == 0


@pytest.mark.parametrize("budget", ["25%", 2.5, True])
def test_a_budget_that_is_not_an_int_or_a_budget_is_refused_by_name(budget):
    """tune(budget="25%") ended in AttributeError: 'str' object has no attribute 'max_evals'."""
    import perfport

    with pytest.raises(PerfportError, match=r"Budget\(fraction=0\.25\)"):
        perfport.tune("vector_add", problem={"n": 1024}, budget=budget)


def test_numpy_integers_are_problem_sizes(tmp_path):
    import numpy as np

    import perfport

    result = perfport.tune("vector_add", problem={"n": np.int64(512)}, budget=1,
                           db=tmp_path / "r.db")  # fmt: skip
    assert result.problem["n"] == 512 and type(result.problem["n"]) is int


def test_results_take_the_device_id_tune_took(tmp_path, cpu, capfd):
    """results(device="opencl:0:0") was [] although tune(device="opencl:0:0") stored there."""
    import perfport

    db = tmp_path / "r.db"
    perfport.tune("vector_add", problem={"n": 1024}, budget=1, db=db, device=cpu.id)
    assert len(perfport.results(db, device=cpu.id)) == 1
    assert perfport.results(db, device="opencl:9:9") == []  # no such device here: no match
    done = run_cli(capfd, "export", "--db", db, "--device", cpu.id)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 2, done.stderr
