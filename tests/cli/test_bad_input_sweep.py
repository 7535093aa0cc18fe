"""Bad input found by a sweep of the whole command line: each is one line on stderr, exit 2,
no traceback, and the results database is left byte for byte as it was."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from perfport.cli import main
from perfport.store import Store

EXAMPLES = Path(__file__).parents[2] / "examples"
SHIPPED = Path(__file__).parents[2] / "src" / "perfport" / "datasets"
JUNK = bytes(range(128, 256)) * 4  # not UTF-8: what a binary file given by mistake holds


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's refusals exit from inside main
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty perfport store (what a first `perfport tune` leaves before its results)."""
    path = tmp_path / "r.db"
    Store(path).close()
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["export", "--output", "{db}"],
        ["select", "export", "--out", "{db}"],
        ["wg", "dataset", "--merge", SHIPPED / "wg" / "stencils.npz", "--out", "{db}"],
        ["wg", "train", "--data", SHIPPED / "wg" / "stencils.npz", "--out", "{db}"],
        ["model", "calibrate", SHIPPED / "model" / "matmul-linear.json", "--out", "{db}"],
        ["model", "evaluate", "--write-data", "{db}"],
    ],
)
def test_an_output_file_never_overwrites_a_results_database(store, capsys, command):
    """`perfport export --output perfport.db` truncated the store it read to a CSV file."""
    before = store.read_bytes()
    args = [str(store) if a == "{db}" else a for a in command]
    if command[0] in ("export", "select"):
        args += ["--db", str(store)]
    err = _refused(args, capsys)
    assert "is a results database" in err and "give another path" in err
    assert store.read_bytes() == before


@pytest.mark.parametrize("narrowed", [[], ["--kernel", "nosuch"]])
def test_results_with_nothing_to_show_says_so_in_one_line(store, capsys, narrowed):
    """An empty store, or a --kernel that matches nothing, was a TypeError traceback from
    sizing the table's columns over no rows. An empty store is a note (exit 0); a filter
    that matches nothing is the user's mistake (exit 2)."""
    assert main(["results", "--db", str(store), *narrowed]) == (2 if narrowed else 0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"no results in {store}" in captured.err
    assert ("--kernel 'nosuch'" in captured.err) == bool(narrowed)
    # --json as the table: an empty store is an empty list, a filter matching nothing exit 2
    assert main(["results", "--db", str(store), *narrowed, "--json"]) == (2 if narrowed else 0)
    out = capsys.readouterr().out.split()
    assert out == ([] if narrowed else ["{", '"results":', "[]", "}"])


def _binary(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(JUNK)
    return path


def _huge_field(tmp_path: Path, name: str) -> Path:
    """A CSV whose one value is longer than the csv module's field limit (128 KiB)."""
    path = tmp_path / name
    path.write_text("n\n" + "1" * 200_000 + "\n")
    return path


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["sweep", "vector_add", "--problems", "{binary}.csv"], "not a text CSV file"),
        (["sweep", "vector_add", "--problems", "{huge}.csv"], "not a problem CSV"),
        (["model", "calibrate", "{binary}.json", "--out", "c.json"], "not JSON"),
        (["model", "predict", "{binary}.json", "matmul-prefetch"], "not JSON"),
        (["model", "evaluate", "--model", "{binary}.json"], "not JSON"),
        (["model", "evaluate", "--data", "{binary}.json"], "not text"),
        (["model", "evaluate", "--data", "{huge}.csv"], "not a CSV table"),
        (["select", "evaluate", "--data", "{huge}.csv.gz", "--kernels", "2"], "not a CSV table"),
    ],
)
def test_a_binary_or_oversized_data_file_is_one_line(tmp_path, capsys, command, says):
    """Each was a UnicodeDecodeError or csv.Error traceback."""
    args = []
    for a in command:
        if a.startswith("{binary}"):
            a = _binary(tmp_path, "data" + a.removeprefix("{binary}"))
        elif a.startswith("{huge}"):
            name = "huge" + a.removeprefix("{huge}")
            a = _huge_field(tmp_path, name.removesuffix(".gz"))
            if name.endswith(".gz"):
                packed = tmp_path / name
                packed.write_bytes(gzip.compress(a.read_bytes()))
                a = packed
        args.append(a)
    db = tmp_path / "r.db"
    err = _refused([*args, "--db", db] if command[0] == "sweep" else args, capsys)
    assert says in err
    assert not db.exists()


def _commands_with_db() -> list[list[str]]:
    """Every command and subcommand that takes --db, found by walking the parser."""
    import argparse

    from perfport.cli import _parser

    found: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif "--db" in action.option_strings:
                found.append(path)

    walk(_parser(), [])
    return found


def test_every_db_option_is_found():
    assert len(_commands_with_db()) >= 18  # the walk itself works: tune, sweep, wg ... split


@pytest.mark.parametrize("command", _commands_with_db(), ids=" ".join)
@pytest.mark.parametrize("path", ["", ":memory:"])
def test_a_db_that_sqlite_would_keep_in_memory_is_refused(capsys, command, path):
    """SQLite reads '' and ':memory:' as a temporary database: `perfport tune ... --db ''`
    measured and reported, and every result vanished with the process."""
    err = _refused([*command, "--db", path], capsys)
    assert "argument --db" in err and "not a file path" in err


def test_roofline_refuses_a_database_it_cannot_use_before_measuring(tmp_path, capsys, monkeypatch):
    """It measured for seconds, printing each benchmark, and only then found the --db was a
    text file: many lines, and the time lost."""
    import perfport.measure.ceilings

    def measured(*args: object) -> None:
        raise AssertionError("measured before the database was checked")

    monkeypatch.setattr(perfport.measure.ceilings, "measure_ceilings", measured)
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n")
    err = _refused(["roofline", "--db", notes], capsys)
    assert "cannot use" in err and notes.read_text() == "not a database\n"


@pytest.mark.parametrize("fmt", [["--format", "csv"], ["--json"]])
def test_export_problem_is_refused_where_it_would_not_filter(store, capsys, fmt):
    """CSV and JSON exports ignored --problem: every problem's rows came out, as if it held."""
    err = _refused(["export", "--db", store, *fmt, "--problem", "n=4096"], capsys)
    assert "--problem narrows a kt-cache or t4 export" in err


def _kt_cache(path: Path, size: int) -> Path:
    """A Kernel Tuner cache of one kernel on one device at ``problem_size`` ``size``."""
    import json

    cache = {
        f"{wg}": {"wg": wg, "time": 1.0 + wg / 100, "times": [1.0 + wg / 100] * 3}
        for wg in (16, 32, 64)
    }
    path.write_text(json.dumps({
        "device_name": "gpu", "kernel_name": "k", "problem_size": size,
        "tune_params_keys": ["wg"], "tune_params": {"wg": [16, 32, 64]}, "objective": "time",
        "cache": cache,
    }))  # fmt: skip
    return path


def test_replay_narrows_to_one_problem_with_problem(tmp_path, capsys):
    """One kernel tuned at two sizes on one device: replay said 'narrow it with --kernel and
    --device', which could not tell the two apart; it takes --problem now."""
    db = tmp_path / "r.db"
    for size in (1024, 2048):
        assert (
            main(["import", str(_kt_cache(tmp_path / f"k{size}.json", size)), "--db", str(db)]) == 0
        )
    capsys.readouterr()
    replay = ["replay", "--db", str(db), "--budget", "2", "--repeats", "1", "--json"]
    err = _refused(replay, capsys)
    assert "2 device/kernel/problem combinations match" in err and "--problem" in err
    assert main([*replay, "--problem", "problem_size=2048"]) == 0
    assert '"budget": 2' in capsys.readouterr().out


@pytest.mark.parametrize(("zero", "says"), [("--steps", "--steps 0: give 1 or more"),
                                            ("--sweep", "--sweep: 0: give at least 2 points")])  # fmt: skip
def test_split_refuses_zero_steps_or_sweep_points(tmp_path, capsys, zero, says):
    """0 read as "not given": --steps 0 ran (and stored) a one-launch split instead."""
    db = tmp_path / "r.db"
    err = _refused(["split", "stencil", "--device", "opencl:0:0.0", "--device", "opencl:0:0.1",
                    "--problem", "width=64", "height=80", "--db", db, zero, "0"], capsys)  # fmt: skip
    assert says in err and not db.exists()


@pytest.mark.parametrize(
    "command",
    [["wg", "evaluate", "--plots"], ["select", "evaluate", "--plots"],
     ["model", "evaluate", "--figures"]],
)  # fmt: skip
def test_a_figure_folder_that_is_a_file_is_refused_before_the_evaluation(
    tmp_path, capsys, monkeypatch, command
):
    """wg evaluate ran every fold (minutes on a big dataset), printing its progress, and only
    then found a file where its --plots folder should be."""
    import perfport.model.evaluate
    import perfport.select
    import perfport.wg

    def evaluated(*args: object, **kwargs: object) -> None:
        raise AssertionError("evaluated before the folder was checked")

    for module in (perfport.wg, perfport.select, perfport.model.evaluate):
        monkeypatch.setattr(module, "evaluate", evaluated)
    in_the_way = tmp_path / "figures"
    in_the_way.write_text("notes\n")
    err = _refused([*command, in_the_way], capsys)
    assert "a file is in the way; give a folder" in err and in_the_way.read_text() == "notes\n"


@pytest.mark.parametrize("command", [["tune", "vector_add"], ["wg", "collect"]])
def test_a_fixed_repeat_count_has_a_ceiling(tmp_path, capsys, command):
    """--repeats 99999999999 was taken: every configuration's launches would have run for days,
    each time kept in memory. Refused while parsing (the bad --problem is never reached)."""
    db = tmp_path / "r.db"
    err = _refused([*command, "--repeats", "10001", "--db", db, "--problem", "nosuch=1"], capsys)
    assert "argument --repeats: 10001: at most 10000" in err and not db.exists()


def test_an_empty_strategy_name_is_refused_not_read_as_the_default(tmp_path, capsys):
    """--strategy '' (an unset $STRATEGY in a script) ran the default strategy."""
    replay = ["replay", "--db", tmp_path / "none.db", "--budget", "1", "--repeats", "1"]
    assert "no strategy ''" in _refused([*replay, "--strategy", ""], capsys)


@pytest.mark.parametrize(
    "command",
    [["space", EXAMPLES / "saxpy.toml"], ["model", "stats", "matmul-prefetch"],
     ["wg", "predict", "--kernel", "sobel"]],
)  # fmt: skip
def test_a_problem_name_given_twice_is_refused(capsys, command):
    """--problem n=1024 n=2048: the last one silently won."""
    err = _refused([*command, "--problem", "n=32", "width=64", "n=64"], capsys)
    assert "--problem n is given twice (n=32, n=64); give each name once" in err


def test_a_sweep_refuses_a_bad_problem_before_measuring_any(tmp_path, capsys):
    """The bad problem was found when the sweep reached it: the store was made and the
    problems before it measured, then the refusal."""
    problems = tmp_path / "problems.csv"
    problems.write_text("n\n1024\n-5\n")
    db = tmp_path / "r.db"
    err = _refused(["sweep", EXAMPLES / "saxpy.toml", "--problems", problems, "--db", db], capsys)
    assert "must all be at least 1" in err and not db.exists()
    assert err.startswith("perfport: error: problem 2 of 2 (n=-5): ")  # which of hundreds
    problems.write_text("n\n1024\nabc\n")
    err = _refused(["sweep", EXAMPLES / "saxpy.toml", "--problems", problems, "--db", db], capsys)
    assert "problem 2 of 2 (n='abc'): " in err and not db.exists()


@pytest.mark.parametrize("below", ["", "cache"])
def test_a_cache_home_under_a_file_is_refused_before_any_command_runs(
    tmp_path, monkeypatch, capsys, below
):
    """pytools (loopy's) printed its own destructor's traceback after perfport's error."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file" / below))
    err = _refused(["model", "stats", "matmul-prefetch", "--problem", "n=64"], capsys)
    assert f"{tmp_path / 'file'} is not a folder" in err and "unset it" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--kernel", "zzz"], "no --kernel 'zzz'"),  # a bare CSV header, exit 0
        (["export", "--format", "kt-cache", "--json"], "give one"),  # --json won silently
        (["export", "--format", "csv", "--json"], "--format csv another file"),  # JSON came
    ],
)
def test_export_refuses_what_it_silently_misread(store, capsys, args, message):
    assert message in _refused([*args, "--db", store], capsys)


def test_replay_names_the_objectives_it_has(tmp_path, capsys):
    """A cache tuned for GFLOP/s: argparse's 'invalid choice' said nothing of why replay has
    only times to rank by."""
    db = tmp_path / "r.db"
    assert main(["import", str(_kt_cache(tmp_path / "k.json", 64)), "--db", str(db)]) == 0
    err = _refused(["replay", "--db", db, "--budget", "2", "--repeats", "1",
                    "--objective", "GFLOP/s"], capsys)  # fmt: skip
    assert "'GFLOP/s' is not one of median, mean and time: replay ranks by the stored times" in err


def test_space_refuses_what_a_search_space_file_cannot_take(tmp_path, capsys):
    """--problem on a T1 file was ignored without a word, printing "problem": {}."""
    t1 = tmp_path / "t1.json"
    entry = {"Name": "x", "Type": "int", "Values": "[1, 2]", "Default": 1}
    t1.write_text(f'{{"ConfigurationSpace": {{"TuningParameters": [{json.dumps(entry)}]}}}}')
    err = _refused(["space", t1, "--problem", "n=5"], capsys)
    assert "--problem cannot apply to" in err and "T1 or CAFF" in err and "drop it" in err
    err = _refused(["space", t1, "--min-work-groups", "--device", "all"], capsys)
    assert "--min-work-groups cannot apply to" in err
    assert main(["space", str(t1), "--json"]) == 0
