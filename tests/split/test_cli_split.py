"""``perfport split``: its JSON, the stored plan, and one-line refusals (exit 2) that leave
the database untouched."""

from __future__ import annotations

import json

import pytest

from tune.cli_in_process import run_cli

TWO = ["--device", "opencl:0:0.0", "--device", "opencl:0:0.1"]


def test_split_json_and_stored_plan(tmp_path, capfd):
    db = str(tmp_path / "r.db")
    done = run_cli(capfd, "split", "stencil", *TWO, "--problem", "width=64", "height=80",
                    "--dimension", "1", "--db", db, "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {
        "devices", "configs", "split_factors", "adjusted_factors", "theoretical_ms",
        "measured_ms", "best_single", "speedup_over_best_single", "verified", "decision",
    } <= set(out)  # fmt: skip
    assert out["verified"] is True and out["dimension"] == 1
    assert out["planned_from"] == "lines"  # the default plan
    assert out["times"] == "measured"  # the default times: every device ran alone
    assert all(c["time_source"] == "measured" and c["alone_ms"] == c["time_ms"]
               for c in out["configs"])  # fmt: skip
    # two sub-devices of one CPU, rows of 256 bytes: one parent buffer per array, unless the
    # plan gave one device every row (timings on a loaded machine can: nothing to share)
    parts = sum(1 for f in out["adjusted_factors"] if f > 0)
    shared = {"kind": "sub-buffers", "why": None}
    assert out["buffers"] == (shared if parts > 1 else {"kind": "copies", "why": "one part"})
    assert out["decision"] in ("split", *out["devices"])
    assert set(out["best_single"]) == {"device", "time_ms"}
    assert sum(out["adjusted_factors"]) == pytest.approx(1.0)
    from perfport.store import Store
    from perfport.store.plans import stored_plans

    with Store(db) as store:
        (plan,) = stored_plans(store, "stencil")
    assert plan.id == out["plan_id"] and plan.run is not None
    assert plan.run["measured_ms"] == out["measured_ms"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["convolution", "--device", "opencl:0:0.0"], "two or more devices"),
        (["convolution", "--device", "opencl:0:0.0", "--device", "opencl:0:0.0"], "each device once"),
        (["convolution", "--device", "opencl:0:0.0", "--device", "opencl:9:0"], "opencl:9:0"),
        (["convolution2d", *TWO], "declares no split"),
        (["convolution", *TWO, "--dimension", "1"], "--dimension 0"),
        (["stencil", *TWO, "--problem", "north=400", "south=400", "east=400", "west=400"],
         "no configuration of stencil is legal"),
        (["convolution", *TWO, "--iterations", "-1"], "--iterations: -1"),
        (["convolution", *TWO, "--sweep", "1001"], "at most 1000"),
        (["convolution", *TWO, "--sweep", "1"], "--sweep: 1: give at least 2 points"),
        # 0 was refused as '--sweep takes 2 or more points' and -1 as 'at least 0'
        (["convolution", *TWO, "--sweep", "0"], "--sweep: 0: give at least 2 points"),
        (["convolution", *TWO, "--sweep", "-1"], "--sweep: -1: give at least 2 points"),
        (["convolution", *TWO, "--device", "opencl:0:0", "--sweep", "3"], "exactly two"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, args, says, capfd):
    db = tmp_path / "r.db"
    done = run_cli(capfd, "split", *args, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert not db.exists()


def test_split_steps_json(tmp_path, capfd):
    db = str(tmp_path / "r.db")
    # --plan eq4 is how time-stepping plans: accepted (lines is refused with --steps).
    done = run_cli(capfd, "split", "stencil", *TWO, "--problem", "width=64", "height=80", "--steps",
                    "4", "--rebalance", "--plan", "eq4", "--db", db, "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {
        "steps", "per_step", "step_ms", "exchange_ms", "moved_ms", "final_parts",
        "theoretical_step_ms", "measured_ms", "best_single", "verified", "decision", "plan_id",
        "buffers",
    } <= set(out)  # fmt: skip
    assert out["steps"] == 4 and out["verified"] is True
    # the stencil's default borders are a halo along its rows: the parts keep copies
    assert out["buffers"]["kind"] == "copies" and "halo" in out["buffers"]["why"]
    assert out["dimension"] == 1  # the stencil's first split that can step: its rows
    assert set(out["per_step"][0]) >= {"parts", "step_ms", "exchange_ms", "exchange_bytes"}


def test_split_steps_text_says_how_buffers_were_made(tmp_path, capfd):
    # no halo along the rows (north = south = 0) and rows of 256 bytes: sub-buffers
    done = run_cli(capfd, "split", "stencil", *TWO, "--problem", "width=64", "height=80", "north=0",
                    "south=0", "--steps", "3", "--db", str(tmp_path / "r.db"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "buffers: sub-buffers of one parent per array" in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["convolution", *TWO, "--steps", "3"], "declares no feeds"),
        (["stencil", *TWO, "--dimension", "0", "--steps", "3"], "outermost axis"),
        (["stencil", *TWO, "--steps", "-2"], "--steps -2"),
        # each said '--steps 2: give 1 or more, without --sweep or --iterations', as if 2
        # were wrong, and --steps 0 named a --sweep never given
        (["stencil", *TWO, "--steps", "2", "--sweep", "3"], "--steps does not combine with --sweep ("),
        (["stencil", *TWO, "--steps", "2", "--iterations", "3"], "not combine with --iterations ("),
        (["stencil", *TWO, "--steps", "0"], "--steps 0: give 1 or more time steps\n"),
        (["stencil", *TWO, "--rebalance"], "give --steps"),
    ],
)  # fmt: skip
def test_bad_steps_are_one_line_and_write_nothing(tmp_path, args, says, capfd):
    db = tmp_path / "r.db"
    done = run_cli(capfd, "split", *args, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not db.exists()


BROKEN = """
from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg, SplitArray, SplitDim

kernel = KernelSpec(
    name="broken1d", entry="scale",
    source="__kernel void scale(__global const float* x, __global float* y, int n) "
           "{ int i = get_global_id(0); if (i < n) y[i] = 2.0f * x[i] }",
    params=(Param("wg", (8, 16), ParamKind.LAUNCH),),
    global_size=(GLOBAL,), local_size=("wg",),
    args=(ArrayArg("x", "float", ("n",)), ArrayArg("y", "float", ("n",), output=True),
          ScalarArg("n", "int", "n")),
    problem={"n": 4096}, default={"wg": 16},
    split=(SplitDim(0, "n", (SplitArray("x"), SplitArray("y")), halo=("1", "1")),),
)
"""


def test_a_kernel_that_does_not_build_fails_in_one_line_and_leaves_no_database(tmp_path, capfd):
    spec = tmp_path / "broken1d.py"
    spec.write_text(BROKEN.replace("GLOBAL", repr("round_up(n, wg)")))
    db = tmp_path / "new.db"
    done = run_cli(capfd, "split", str(spec), *TWO, "--db", str(db))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "broken1d did not build on opencl:0:0.0: error:" in done.stderr
    assert "expected ';'" in done.stderr
    assert not db.exists()  # created by nothing but this failed command


def test_a_part_that_cannot_launch_is_refused_in_one_line(tmp_path, capfd):
    # the global size is exactly n: a part with its halo (2049) is no multiple of 16
    spec = tmp_path / "unpadded.py"
    spec.write_text(BROKEN.replace("GLOBAL", repr("n")).replace("2.0f * x[i] }", "2.0f * x[i]; }"))
    db = tmp_path / "new.db"
    done = run_cli(capfd, "split", str(spec), *TWO, "--db", str(db), "--plan", "eq4")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "cannot launch" in done.stderr and "round_up(n, wg)" in done.stderr
    assert not db.exists()


def test_hints_print_commands_that_run_as_printed(tmp_path, capfd):
    db = str(tmp_path / "x.db")
    done = run_cli(capfd, "split", "convolution", *TWO, "--problem", "n=1000", "mask=200000",
                    "--db", db)  # fmt: skip
    assert done.returncode == 2
    hint = done.stderr.split("see '")[1].split("'")[0]
    assert "--problem" in hint and "mask=200000" in hint
    shown = run_cli(capfd, *hint.split()[1:], "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["legal"] == 0  # what the refusal said
    spec = tmp_path / "scale.py"
    spec.write_text(
        BROKEN.replace("GLOBAL", repr("round_up(n, wg)")).replace("* x[i] }", "* x[i]; }")
    )
    empty = tmp_path / "empty.db"
    from perfport.store import Store

    Store(empty).close()  # a database with nothing tuned in it
    done = run_cli(capfd, "split", str(spec), *TWO, "--times", "store", "--db", str(empty))
    assert done.returncode == 2
    assert f"'perfport tune {spec} --device opencl:0:0.0 --problem n=4096 --db {empty}'" in (
        done.stderr
    )
