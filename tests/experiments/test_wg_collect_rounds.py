"""experiments/2026-11-23-wg-xeon-rounds/wg_collect_rounds.py: which scenarios a store already holds complete."""

from conftest import fill_wg_campaign, load_experiment
from perfport.store import CampaignStatus, Store
from perfport.wg import Scenario

wcr = load_experiment("wg_collect_rounds")


def test_complete_scenarios_are_found_by_kernel_and_problem(db, cpu, tmp_path):
    heat = Scenario("heat", (("height", 512), ("width", 512)))
    gol = Scenario("gol", (("height", 512), ("width", 512)))
    bigger = Scenario("heat", (("height", 1024), ("width", 1024)))
    assert wcr.complete(tmp_path / "none.db", [heat]) == set()
    with Store(db) as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 512, "height": 512}, 1.0)
        fill_wg_campaign(store, cpu, "gol", {"width": 512, "height": 512}, 1.0)
        unfinished = store.campaign("gol-1.0")
        store.set_status(unfinished, CampaignStatus.RUNNING)  # interrupted: measured again
    assert wcr.complete(db, [heat, gol, bigger]) == {heat}


def test_impossible_scenario_lists_are_one_line_errors(tmp_path, monkeypatch, capsys):
    import pytest

    for argv, message in (
        (["--max-border", "-1"], "--max-border -1: borders are 0 or more"),
        (["--max-border", "0", "--no-real-world", "--scenarios", "50", "--sizes", "512"],
         "--scenarios: 50 scenarios asked for, but these sizes and borders give only 10"),
    ):  # fmt: skip
        monkeypatch.setattr(
            "sys.argv", ["wg_collect_rounds.py", "--db", str(tmp_path / "x.db"), *argv]
        )
        with pytest.raises(SystemExit) as info:
            wcr.main()
        assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()


def test_candidates_cover_the_shipped_cpu_scenarios_and_keep_the_default():
    sizes = wcr.cpu_candidates(6)
    assert (32, 4) in sizes and 6 <= len(sizes) <= 7
    assert sizes == tuple(sorted(set(sizes)))
    assert len(wcr.cpu_candidates(32)) >= 32


def test_a_negative_candidate_count_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    import pytest

    monkeypatch.setattr(
        "sys.argv", ["wg_collect_rounds.py", "--db", str(tmp_path / "x.db"), "--candidates", "-1"]
    )
    with pytest.raises(SystemExit) as info:
        wcr.main()
    assert info.value.code == 2 and "--candidates -1: give a count" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()
