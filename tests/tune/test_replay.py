import json

import numpy as np
import pytest

from perfport import PerfportError, RunSettings, Timing, tune
from perfport.tune.replay import replay_db
from tune.cli_in_process import run_cli


def test_replay_stored_campaign(db, capfd):
    tune(
        "convolution",
        problem={"n": 4096, "mask": 5},
        strategy="brute_force",
        db=db,
        settings=RunSettings(timing=Timing.fixed(2)),
    )
    result = replay_db(db, "convolution", None, "random", budget=11, repeats=4)
    assert result.mean_best_fraction == 1.0  # 11 of 11 configurations: the optimum is always found
    assert len(result.curve) == 11 and result.curve[0] <= result.curve[-1]
    done = run_cli(capfd, "replay", "--db", db, "--budget", "5", "--repeats", "3", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {
        "strategy",
        "budget",
        "repeats",
        "mean_best_fraction",
        "median_evals_to_95",
        "curve",
    } <= set(out)
    assert out["budget"] == 5 and out["repeats"] == 3 and len(out["curve"]) == 5


def _skewed_cache(path):
    """A Kernel Tuner cache where the mean and the median rank differently: configuration a
    has a steady 1.0 ms, b mostly 0.8 ms with one 3.0 ms outlier (median 0.8, mean 1.35)."""
    entries = {
        "1": {"x": 1, "time": 1.0, "times": [1.0, 1.0, 1.0, 1.0]},
        "2": {"x": 2, "time": 1.35, "times": [0.8, 0.8, 0.8, 3.0]},
        "4": {"x": 4, "time": 2.0, "times": [2.0, 2.0, 2.0, 2.0]},
    }
    cache = {"device_name": "Skewed GPU", "kernel_name": "skew", "problem_size": [64],
             "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 4]}, "cache": entries}  # fmt: skip
    path.write_text(json.dumps(cache))
    return path


def test_replay_ranks_an_imported_cache_by_its_own_time(tmp_path, capfd):
    from perfport.store import Store
    from perfport.store.formats.importing import import_file
    from perfport.tune.replay import Objective

    db = tmp_path / "kt.db"
    with Store(db) as store:
        import_file(store, _skewed_cache(tmp_path / "c.json"))
    default = replay_db(db, "skew", None, "brute_force", budget=3, repeats=1)
    assert default.objective is Objective.TIME and default.optimum_ms == 1.0  # the mean
    assert default.to_json()["objective"] == "time"
    median = replay_db(db, "skew", None, "brute_force", 3, 1, objective=Objective.MEDIAN)
    assert median.objective is Objective.MEDIAN and median.optimum_ms == 0.8
    mean = replay_db(db, "skew", None, "brute_force", 3, 1, objective=Objective.MEAN)
    assert mean.optimum_ms == 1.0
    # By name, as tune takes its objective: "median" was ranked by the mean, then to_json failed.
    named = replay_db(db, "skew", None, "brute_force", 3, 1, objective="median")
    assert named.optimum_ms == 0.8 and named.to_json()["objective"] == "median"
    with pytest.raises(PerfportError, match="give one of median, mean, time"):
        replay_db(db, "skew", None, "brute_force", 3, 1, objective="fastest")
    run = ["replay", "--db", db, "--budget", "3", "--repeats", "1"]
    text = run_cli(capfd, *run, "--objective", "median")
    assert text.returncode == 0 and "objective: median" in text.stdout, text.stderr
    done = run_cli(capfd, *run, "--json")
    report = json.loads(done.stdout)
    assert report["objective"] == "time"
    assert (report["kernel"], report["device"], report["problem"]) == (
        "skew",
        "Skewed GPU",
        {"problem_size": "64"},
    )


def test_time_is_refused_on_perfports_own_results(db, capfd):
    tune("convolution", problem={"n": 4096, "mask": 5}, strategy="brute_force", db=db,
         settings=RunSettings(timing=Timing.fixed(2)), budget=3)  # fmt: skip
    run = ["replay", "--db", db, "--budget", "2"]
    done = run_cli(capfd, *run, "--repeats", "1", "--objective", "time")
    assert done.returncode == 2 and "use --objective median or mean" in done.stderr
    assert "Traceback" not in done.stderr
    partial = replay_db(db, "convolution", None, "random", 2, 1).to_json()
    assert partial["objective"] == "median"
    # 3 of the 11 measured: the optimum is the best of those 3, and the result says how many
    assert partial["configurations"] == 3


def test_a_strategy_that_asks_outside_the_space_is_named():
    """A strategy of the user's own asking for 9999 ended in numpy's IndexError."""
    from perfport._core import Param
    from perfport.space import Space
    from perfport.strategies import Strategy
    from perfport.tune.replay import ReplayData, simulate

    class Wild(Strategy):
        name, summary = "wild", "asks past the end"

        def ask(self) -> int | None:
            return 9999

    data = ReplayData("d", Space([Param("a", (1, 2, 3))]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(PerfportError, match="strategy wild asked for configuration 9999, outside"):
        simulate(data, Wild, budget=3, seed=0)


def test_a_strategy_that_asks_a_told_configuration_is_named():
    """Replay stopped there silently, as tune did: its curve ended early."""
    from perfport._core import Param
    from perfport.space import Space
    from perfport.strategies import Strategy, StrategyError
    from perfport.tune.replay import ReplayData, simulate

    class Again(Strategy):
        name, summary = "again", "asks the first one twice"

        def ask(self) -> int | None:
            return 0

    data = ReplayData("d", Space([Param("a", (1, 2, 3))]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(StrategyError, match=r"strategy again: ask\(\) returned configuration 0"):
        simulate(data, Again, budget=3, seed=0)


def test_a_zero_time_in_an_imported_cache_is_not_a_time(tmp_path):
    """A cache's 0.0 ms (a broken timing) was the optimum every fraction was taken against,
    and the strategies took its logarithm. Import now refuses such a cache; a store that took
    one in before still replays."""
    import dataclasses

    from perfport import Measurement, Outcome
    from perfport.store import Store
    from perfport.store.formats.importing import parse, store_imported

    path = _skewed_cache(tmp_path / "c.json")
    imported = parse(path)
    zero = [Measurement(m.config, Outcome.OK, "", (0.0,) * 4) if m.config["x"] == 4 else m
            for m in imported.measurements]  # fmt: skip
    db = tmp_path / "kt.db"
    with Store(db) as store:
        store_imported(store, dataclasses.replace(imported, measurements=tuple(zero)), path)
    result = replay_db(db, "skew", None, "bayes_sweep", budget=3, repeats=2)
    assert result.optimum_ms == 1.0 and result.mean_best_fraction == 1.0


def _import(tmp_path, keys, declared, entries):
    from perfport.store import Store
    from perfport.store.formats.importing import import_file

    cache = {"device_name": "GPU", "kernel_name": "k", "problem_size": 64,
             "tune_params_keys": keys, "tune_params": declared, "cache": entries}  # fmt: skip
    path, db = tmp_path / "c.json", tmp_path / "kt.db"
    path.write_text(json.dumps(cache))
    with Store(db) as store:
        import_file(store, path)
    return db


def test_a_value_a_cache_declares_twice_counts_once(tmp_path):
    """Import took a cache declaring [1, 2, 2]; replay then refused it, printing the list."""
    entries = {str(v): {"v": v, "time": 3.0 - v, "times": [3.0 - v]} for v in (1, 2)}
    db = _import(tmp_path, ["v"], {"v": [1, 2, 2, 3, 1]}, entries)
    result = replay_db(db, "k", None, "brute_force", budget=5, repeats=1)
    assert result.optimum_ms == 1.0 and result.configurations == 2
    assert [p.values for p in result.source.space.params] == [(1, 2, 3)]


def test_a_parameter_name_replay_cannot_take_is_named_with_the_fix(tmp_path):
    entries = {"1,a": {"tile-size": 1, "m": "a", "time": 1.0, "times": [1.0]}}
    db = _import(tmp_path, ["tile-size", "m"], {"tile-size": [1], "m": ["a"]}, entries)
    with pytest.raises(PerfportError, match=r"'tile-size' is not an identifier .* rename it "
                       r"\(say to 'tile_size'\) in the file's tune_params_keys"):  # fmt: skip
        replay_db(db, "k", None, "brute_force", budget=1, repeats=1)


def test_a_median_between_two_runs_is_not_rounded_down():
    """Two runs reaching the optimum after 2 and 3 evaluations: the median is 2.5 (reported
    as 2 once), and a whole median stays an int."""
    from types import SimpleNamespace

    from perfport.tune.replay import score

    data = SimpleNamespace(optimum=1.0)
    slow, fast = np.array([4.0, 2.0, 1.0, 1.0]), np.array([4.0, 1.0, 1.0, 1.0])
    _, reached = score(data, [slow, fast], 4)  # type: ignore[arg-type]
    assert reached[0.95] == 2.5
    _, reached = score(data, [slow, fast, fast], 4)  # type: ignore[arg-type]
    assert reached[0.95] == 2 and isinstance(reached[0.95], int)
