"""The command line: every reporting command has --json; bad input is one line, exit 2."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfport.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"
DATASETS = Path(__file__).parents[2] / "src" / "perfport" / "datasets"
GEMM = (
    Path(__file__).parents[2] / "data" / "lawson-gemm" / "xeon16-pocl.csv.gz"
)  # research data, not shipped
SHIPPED_WG = DATASETS / "wg" / "stencils.npz"


def perfport(*args, check=True) -> subprocess.CompletedProcess[str]:
    """``perfport ARGS`` through the main() the console script calls, in this process: a new
    interpreter costs ~2 s of imports and device discovery per call (the process itself is
    test_console_script_and_module_agree's). An exception main() lets out fails the test, as
    a traceback would."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    done = subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_devices_json():
    devices = json.loads(perfport("devices", "--json").stdout)["devices"]
    assert devices and {
        "id",
        "name",
        "vendor",
        "type",
        "driver",
        "compute_units",
        "max_work_group_size",
        "max_work_item_sizes",
        "local_mem_bytes",
        "global_mem_bytes",
        "subgroup_size",
        "fingerprint",
    } <= set(devices[0])


# A machine with pyopencl (a bare install) but no OpenCL platform and no CuPy.
NO_PLATFORM = """
import sys
import pyopencl
from perfport.devices import cuda

pyopencl.get_platforms = lambda: []
cuda.list_cuda = lambda: []
from perfport.cli import main

sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("json_flag", [False, True])
def test_no_device_is_an_error_naming_the_extra(json_flag):
    args = ["devices", "--json"] if json_flag else ["devices"]
    done = subprocess.run([sys.executable, "-c", NO_PLATFORM, *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "pip install 'perfport[pocl]'" in done.stderr  # the extra's brackets survive
    if json_flag:
        assert json.loads(done.stdout) == {"devices": []}
    else:
        assert done.stdout == ""  # no empty table


def test_tune_results_export(tmp_path):
    db = tmp_path / "r.db"
    out = perfport(
        "tune",
        "vector_add",
        "--problem",
        "n=4096",
        "--budget",
        "4",
        "--repeats",
        "3",
        "--confirm",  # no re-timing: every result keeps exactly its 3 samples (checked below)
        "0",
        "--db",
        db,
        "--json",
    )
    result = json.loads(out.stdout)
    for key in (
        "campaign",
        "device",
        "kernel",
        "problem",
        "configs_total",
        "pruned",
        "measured",
        "outcomes",
        "best",
        "default",
    ):
        assert key in result, key
    assert result["measured"] == 4 and result["problem"]["n"] == 4096
    assert set(result["best"]) >= {"config", "time_ms"} and set(result["default"]) >= {
        "config",
        "time_ms",
    }
    assert result["outcomes"]["ok"] == 4

    table = perfport(
        "tune", "vector_add", "--problem", "n=4096", "--budget", "4", "--repeats", "3", "--db", db,
        "--confirm", "0",
    ).stdout  # fmt: skip
    assert "Fastest" in table and "best:" in table  # the same campaign, shown as a table

    results = json.loads(perfport("results", "--db", db, "--json").stdout)["results"]
    assert len(results) == 1 and results[0]["kernel"] == "vector_add"
    assert results[0]["speedup_over_default"] is not None and results[0]["outcomes"]["ok"] == 4

    csv_path = tmp_path / "r.csv"
    perfport("export", "--db", db, "--output", csv_path)
    assert len(csv_path.read_text().splitlines()) == 5
    rows = json.loads(perfport("export", "--db", db, "--json").stdout)
    assert len(rows) == 4 and all(len(r["times_ms"]) == 3 for r in rows)


def test_space_and_strategies_json():
    space = json.loads(perfport("space", "matmul", "--json").stdout)
    assert space["cartesian"] == 2304 and space["legal"] == 640 and "removed_by" in space
    strategies = json.loads(perfport("strategies", "--json").stdout)
    assert strategies["default"] in {s["name"] for s in strategies["strategies"]}


def test_console_script_and_module_agree():
    exe = Path(sys.executable).with_name("perfport")
    done = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    module = subprocess.run([sys.executable, "-m", "perfport", "--version"], capture_output=True,
                            text=True)  # fmt: skip
    assert done.returncode == module.returncode == 0 and done.stdout == module.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tune", "nosuchkernel"], "no built-in kernel"),
        (["tune", "stencil", "--problem", "widht=3"], "no problem value widht"),
        (["tune", "stencil", "--problem", "width"], "name=value"),
        (["tune", "stencil", "--device", "opencl:9:9"], "no device"),
        (["tune", "stencil", "--strategy", "magic"], "no strategy"),
        (["tune", "stencil", "--budget", "0"], "at least 1"),
        (["tune", "missing.toml"], "does not exist"),
        (["results", "--db", EXAMPLES / "saxpy.cl"], "give another --db path"),
        (["tune", "stencil", "--seed", "-1"], "must be at least 0"),
        (["tune", "stencil", "--timeout", "0"], "not a positive number of seconds"),
        (["tune", "sobel", "--problem", "pad=abc"], "pad must be an integer"),
        (["wg", "predict", "--kernel", "sobel", "--problem", "width=abc"], "must be an integer"),
        (["wg", "predict", "--kernel", "sobel", "--problem", "width=-5"], "unusable shape"),
        (["wg", "predict", "--kernel", "sobel", "--problem", "boundary=x"], "restrictions"),
        (["wg", "collect", "--sizes", "512,,1024"], "give sizes like 512,1024"),
        (["wg", "collect", "--scenarios", "0"], "must be at least 1"),
        (["wg", "evaluate", "--methods", ""], "--methods: give at least one"),
        (["serve", "--port", "99999"], "not a port"),
        (["serve", "--workers", "0"], "must be at least 1"),
        (["serve", "--workers", "65"], "--workers: give at most 64"),
        (
            ["worker", "--scheduler", "tcp://127.0.0.1:9", "--device", "all", "--device", "x"],
            "comes alone",
        ),
        (["select", "evaluate", "--kernels", "1000"], "each must be 1 to 640"),
        (
            ["select", "fit", "--data", GEMM, "--kernels", "4", "--out", "x", "--pruning", "no"],
            "unknown pruning",
        ),
    ],
)
def test_bad_input_is_one_line(args, message):
    done = perfport(*args, check=False)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_bad_files_and_paths_are_one_line_and_outputs_land_where_named(tmp_path):
    spec = tmp_path / "quits.py"
    spec.write_text("raise SystemExit(0)\n")
    empty_space = tmp_path / "none.toml"
    saxpy = (EXAMPLES / "saxpy.toml").read_text()  # with its files' paths, and no legal size
    saxpy = saxpy.replace('"saxpy.cl"', f'"{EXAMPLES / "saxpy.cl"}"')
    # A reference must lie beside the spec (docs/kernel-spec.md): copy it there.
    (tmp_path / "saxpy.py").write_text((EXAMPLES / "saxpy.py").read_text())
    empty_space.write_text(saxpy.replace("[problem]", 'restrictions = ["wg > 10000"]\n[problem]'))
    cut = tmp_path / "cut.npz"
    cut.write_bytes((SHIPPED_WG).read_bytes()[:1000])
    cases = [
        (["space", spec], "raised SystemExit"),
        (["tune", empty_space, "--db", tmp_path / "t.db"], "no configuration is legal"),
        (["wg", "evaluate", "--data", cut], "not a perfport work-group dataset"),
        (
            ["wg", "dataset", "--merge", SHIPPED_WG, "--out", tmp_path / "no" / "x.npz"],
            "check the path",
        ),
    ]
    for args, message in cases:
        done = perfport(*args, check=False)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t.db").exists()  # refused before a store was made
    out = tmp_path / "named"  # no .npz suffix: the file is written under the name given
    perfport("wg", "dataset", "--merge", SHIPPED_WG, "--out", out)
    assert out.is_file() and not out.with_suffix(".npz").exists()


@pytest.mark.slow  # seconds of subprocesses; ./dev test --slow runs it
def test_wg_evaluate_skips_a_partition_the_data_cannot_split(tmp_path):
    """One device: leave-one-device-out has nothing to train on. Asked alone it is a one-line
    error; beside a partition that works it is skipped with a note on stderr."""
    from conftest import tiny_wg_dataset
    from perfport.wg import save_dataset

    rng = np.random.default_rng(0)
    names = [("cpu", k, f"{n}") for k in ("synthetic", "heat") for n in (512, 1024, 2048)]
    data = tiny_wg_dataset(
        [[4, 4], [8, 4], [16, 4]], rng.uniform(1, 2, (6, 3)), names, rng.uniform(0, 1, (6, 2))
    )
    path = tmp_path / "one-device.npz"
    save_dataset(data, path)
    alone = perfport("wg", "evaluate", "--data", path, "--partitions", "device", check=False)
    assert alone.returncode == 2 and "needs at least two devices" in alone.stderr
    assert len(alone.stderr.strip().splitlines()) == 1
    both = perfport("wg", "evaluate", "--data", path, "--partitions", "device,kernel",
                    "--methods", "performance_knn", "--json")  # fmt: skip
    assert [r["partition"] for r in json.loads(both.stdout)["results"]] == ["kernel"]
    assert "skipped device" in both.stderr
    seeded = perfport("wg", "evaluate", "--data", path, "--partitions", "10-fold", "--seed", 3,
                      "--methods", "performance_forest+fixed", "--json")  # fmt: skip
    assert json.loads(seeded.stdout)["results"][0]["method"] == "performance_forest+fixed"
    negative = perfport("wg", "evaluate", "--data", path, "--seed", -1, check=False)
    assert negative.returncode == 2 and len(negative.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # several tuning runs in subprocesses; ./dev test --slow runs it
def test_select_evaluate_plots_what_was_evaluated(tmp_path):
    """The classifier chart is the paper's (relative, PCA + k-means) where those ran, else the
    first normalisation and pruning that did."""
    done = perfport("select", "evaluate", "--data", GEMM, "--kernels", "2,4",
                    "--normalisations", "sigmoid", "--prunings", "greedy,top_n",
                    "--classifiers", "decision_tree_a", "--plots", tmp_path, "--json")  # fmt: skip
    assert {r["pruning"] for r in json.loads(done.stdout)["results"]} == {"greedy", "top_n"}
    assert (tmp_path / "pruning.png").stat().st_size > 0
    assert (tmp_path / "classifiers.png").stat().st_size > 0


@pytest.mark.slow  # several tuning runs in subprocesses; ./dev test --slow runs it
def test_tune_measures_a_shipped_set(tmp_path):
    """The portable workflow's last step: a new device measures only the shipped set."""
    shipped = tmp_path / "set.json"
    shipped.write_text(json.dumps({"k": 2, "configs": [{"wc": 8, "wr": 8}, {"wc": 16, "wr": 4}]}))
    db = tmp_path / "r.db"
    args = ["tune", "stencil", "--problem", "width=64", "height=64", "--repeats", "2",
            "--db", db, "--configs", shipped, "--build-jobs", "2", "--json"]  # fmt: skip
    out = json.loads(perfport(*args).stdout)
    assert out["measured"] == 2 and out["status"] == "complete" and out["default"] is None
    assert out["best"]["config"] in ({"wc": 8, "wr": 8}, {"wc": 16, "wr": 4})  # not the default
    for text, message in [("{", "not JSON"), ('{"configs": 3}', "list of parameter dicts"),
                          ('[{"wc": 8}]', "exactly the parameters")]:  # fmt: skip
        shipped.write_text(text)
        done = perfport(*args, check=False)
        assert done.returncode == 2 and message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_wg_evaluate_runs_the_default_model_unless_told_and_all_means_every_method(
    monkeypatch, capsys
):
    """Without --methods only the default model is evaluated (its rows carry the speedups
    over the fixed sizes); '--methods all' asks for the paper's whole grid. Evaluation itself
    is replaced: this checks the choice, not a run."""
    from perfport import wg
    from perfport.cli import main

    asked: list[list[str]] = []

    def record(data, methods, partitions, seed=0, progress=None):
        asked.append(list(methods))
        raise KeyboardInterrupt  # stop before anything is evaluated

    monkeypatch.setattr(wg, "evaluate", record)
    assert main(["wg", "evaluate", "--json"]) == 130
    assert main(["wg", "evaluate", "--methods", "all", "--json"]) == 130
    assert main(["wg", "evaluate", "--methods", "svm+random,performance_knn", "--json"]) == 130
    assert asked == [
        ["performance_forest+novel"],
        list(wg.METHODS),
        ["svm+random", "performance_knn"],
    ]
    assert wg.DEFAULT_METHODS == ("performance_forest+novel",) and len(wg.METHODS) == 39
    assert capsys.readouterr().out == ""  # progress and notes never go to stdout


def _pilot_csv(path):
    """A few scenarios in the format of Cummins' runtimes.csv (ms; 0 where nothing ran)."""
    sizes = ["4x4", "8x4", "16x4", "32x4"]
    head = "host,dev_name,dev_count,kern_checksum,north,south,east,west,data_width,data_height,max_wg_size"
    rows = [
        f"h{d},dev{d},1,k{k},{k},{k},1,1,512,512,256,"
        + ",".join(str(1.0 + abs(i - (d + k) % 4)) for i in range(len(sizes)))
        for d in range(2)
        for k in range(4)
    ]
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([f"{head},{','.join(sizes)}", *rows]) + "\n")


def test_third_party_data_is_found_by_the_environment_not_the_working_directory(tmp_path):
    shared = tmp_path / "shared" / "data"
    _pilot_csv(shared / "cummins-omnitune-wgsize" / "simplebig_runtimes.csv")
    work = tmp_path / "work"  # ../shared/data from here holds the file: not a place to look
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PERFPORT_SHARED_DATA"}
    train = [sys.executable, "-m", "perfport", "wg", "train", "--data", "cummins-pilot",
             "--method", "decision_tree+nearest_neighbour", "--out", "m.pkl", "--json"]  # fmt: skip
    for where in (None, work):  # unset, or a folder without the file
        extra = {"PERFPORT_SHARED_DATA": str(where)} if where else {}
        done = subprocess.run(train, cwd=work, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "github.com/ChrisCummins/msc-thesis" in done.stderr  # where it is published
        assert "PERFPORT_SHARED_DATA" in done.stderr and "--data" in done.stderr  # how to point
        assert not (work / "m.pkl").exists()
    done = subprocess.run(train, cwd=work, env={**env, "PERFPORT_SHARED_DATA": str(shared)},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scenarios"] == 8 and (work / "m.pkl").is_file()


@pytest.mark.slow  # several tuning runs in subprocesses; ./dev test --slow runs it
def test_tune_objective_and_metrics_in_tables_and_json(tmp_path):
    """A spec's metrics reach tune --json, results and export; --objective picks the best."""
    kernel = tmp_path / "vadd.toml"
    kernel.write_text(
        'name = "vadd"\nentry = "vadd"\nglobal_size = ["n"]\nlocal_size = ["block"]\n'
        'source = "__kernel void vadd(__global const float* a, __global float* c) '
        '{ int i = get_global_id(0); c[i] = a[i] * 2; }"\n'
        'bytes = "8 * n"\nproblem = { n = 4096 }\n'
        'params = [{ name = "block", values = [16, 64], kind = "launch" }]\n'
        'args = [{ kind = "array", name = "a", dtype = "float32", shape = ["n"] },\n'
        '  { kind = "array", name = "c", dtype = "float32", shape = ["n"], output = true }]\n'
        '[metrics]\nslowness = "time_ms * block"\n'
    )
    db = tmp_path / "m.db"
    run = ["tune", kernel, "--repeats", "2", "--db", db, "--no-verify", "--json"]
    out = json.loads(perfport(*run, "--objective", "slowness:min").stdout)
    assert out["objective"] == "slowness:min" and out["roofline"] is None
    best = out["best"]["metrics"]
    assert set(best) == {"GBps", "slowness", "roofline", "roofline_same_bytes"}
    assert best["GBps"] == pytest.approx(8 * 4096 / out["best"]["time_ms"] / 1e6)
    assert best["slowness"] == pytest.approx(
        out["best"]["time_ms"] * out["best"]["config"]["block"]
    )
    results = json.loads(perfport("results", "--db", db, "--json").stdout)["results"]
    assert results[0]["best"]["metrics"]["GBps"] > 0
    rows = json.loads(perfport("export", "--db", db, "--format", "json").stdout)
    assert all(r["metrics"]["slowness"] > 0 for r in rows)
    assert "metric.GBps" in perfport("export", "--db", db).stdout.splitlines()[0]
    table = perfport("tune", kernel, "--repeats", "2", "--db", db, "--no-verify").stdout
    assert "GBps" in table and "perfport roofline --device" in table
    bad = perfport(*run, "--objective", "GFLOPs", check=False)
    assert bad.returncode == 2 and "has no such metric" in bad.stderr


def test_results_that_match_nothing_say_so_in_one_line(tmp_path):
    from perfport.store import Store

    db = tmp_path / "empty.db"
    Store(db).close()
    done = perfport("results", "--db", db, "--kernel", "nokernel", check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no results in" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = perfport("results", "--db", db)
    assert "no results in" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(perfport("results", "--db", db, "--json").stdout) == {"results": []}
    # --json as the table: it printed {"results": []} with exit 0 for a filter that matched nothing
    done = perfport("results", "--db", db, "--kernel", "nokernel", "--json", check=False)
    assert done.returncode == 2 and done.stdout == "" and "no results in" in done.stderr


def _vadd_toml(source: str) -> str:
    return (
        f'name = "vadd"\nentry = "vadd"\nglobal_size = ["n"]\nlocal_size = ["block"]\n'
        f'source = "{source}"\nproblem = {{ n = 256 }}\n'
        'params = [{ name = "block", values = [16, 64], kind = "launch" }]\n'
        'args = [{ kind = "array", name = "c", dtype = "float32", shape = ["n"], output = true }]\n'
    )


def test_a_tune_where_nothing_runs_correctly_says_so_without_a_table(tmp_path):
    """With no configuration ok, the table's column widths came from no rows: a TypeError."""
    kernel = tmp_path / "vadd.toml"
    kernel.write_text(_vadd_toml("__kernel void vadd(__global float* c) { c[0] = nosuch; }"))
    done = perfport("tune", kernel, "--db", tmp_path / "t.db", "--no-verify", check=False)
    assert "Traceback" not in done.stderr and "no configuration ran correctly" in done.stdout
    assert "outcomes: compile_error 2" in done.stdout
    # Exit status 1 (it was 0: a script could not tell), the JSON still printed, all stored.
    assert done.returncode == 1, done.stderr
    again = perfport("tune", kernel, "--db", tmp_path / "t.db", "--no-verify", "--json",
                     check=False)  # fmt: skip
    assert again.returncode == 1 and json.loads(again.stdout)["best"] is None
    assert json.loads(perfport("results", "--db", tmp_path / "t.db", "--json").stdout)["results"]


def test_a_sweep_problem_where_nothing_runs_correctly_exits_1(tmp_path):
    kernel = tmp_path / "vadd.toml"
    kernel.write_text(_vadd_toml("__kernel void vadd(__global float* c) { c[0] = nosuch; }"))
    problems = tmp_path / "p.csv"
    problems.write_text("n\n256\n512\n")
    done = perfport("sweep", kernel, "--problems", problems, "--db", tmp_path / "s.db",
                    "--no-verify", check=False)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "no configuration ran correctly at 2 problem(s)" in done.stdout
    assert done.stdout.count("best no result") == 2
    # Run again (or alongside another sweep that measured them): nothing measured here, and
    # still no configuration ran correctly; it exited 0.
    again = perfport("sweep", kernel, "--problems", problems, "--db", tmp_path / "s.db",
                     "--no-verify", check=False)  # fmt: skip
    assert again.returncode == 1 and "0 measured" in again.stdout, again.stdout


def test_a_sweep_problem_where_nothing_is_legal_is_no_failure(tmp_path):
    """n = 8 runs; at n = 12 neither block divides n, so nothing runs, as the sweep says:
    that is no configuration failing, and it exited 1 (review)."""
    kernel = tmp_path / "vadd.toml"
    kernel.write_text(_vadd_toml("__kernel void vadd(__global float* c) { c[get_global_id(0)] = 1; }")
                      .replace("values = [16, 64]", "values = [8, 16]"))  # fmt: skip
    problems = tmp_path / "p.csv"
    problems.write_text("n\n16\n12\n")
    done = perfport("sweep", kernel, "--problems", problems, "--db", tmp_path / "s.db",
                    "--no-verify", check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("best no result") == 1


def test_an_entry_point_the_source_never_names_is_refused_before_any_build(tmp_path):
    kernel = tmp_path / "vadd.toml"
    kernel.write_text(_vadd_toml("__kernel void vad(__global float* c) { c[0] = 1; }"))
    done = perfport("tune", kernel, "--db", tmp_path / "t.db", check=False)
    assert done.returncode == 2 and "entry 'vadd' does not occur" in done.stderr
    assert "set entry to one of vad" in done.stderr and not (tmp_path / "t.db").exists()


def test_an_export_read_only_in_part_leaves_no_traceback(tmp_path):
    """`perfport export | head` closed the store under the row stream: 'Exception ignored'."""
    from perfport import Config, Measurement, Outcome
    from perfport.kernels import builtin
    from perfport.space import PruningReport
    from perfport.store import Store
    from perfport.store.formats.imported import external_device

    db = tmp_path / "r.db"
    spec = builtin("vector_add")
    with Store(db) as store:
        ids = (store.device_id(external_device("GPU")), store.kernel_id(spec),
               store.problem_id(spec.problem))  # fmt: skip
        campaign = store.open_campaign("c", ids, "random", 0, {}, PruningReport(999, 999, ()))
        store.record_many(campaign, [Measurement(Config.of(wg=w), Outcome.OK, times_ms=(1.0,))
                                     for w in range(1, 999)])  # fmt: skip
    reader = subprocess.Popen([sys.executable, "-m", "perfport", "export", "--db", str(db)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.read(100)
    reader.stdout.close()  # the reader stops early, as head does
    err = reader.stderr.read().decode()
    reader.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_space_takes_devices_as_tune_does():
    """A device given twice was listed twice ("legal on all 2 devices"); 'all' was refused."""
    twice = json.loads(perfport("space", "stencil", "--device", "opencl:0:0", "--device",
                                "opencl:0:0", "--json").stdout)  # fmt: skip
    assert "devices" not in twice and twice["device"] == "opencl:0:0"
    every = json.loads(perfport("space", "stencil", "--device", "all", "--json").stdout)
    assert "opencl:0:0" in every["devices"] and "common" in every


def test_a_space_file_that_is_not_json_names_the_files_space_takes(tmp_path):
    """A truncated T1 file was told only to be a stencil description."""
    cut = tmp_path / "cut.json"
    cut.write_text('{"ConfigurationSpace": {"parameters": [')
    done = perfport("space", cut, check=False)
    assert done.returncode == 2 and "not JSON" in done.stderr and "T1 or BAT" in done.stderr
