"""benchmarks/wg_collect_rounds.py: which scenarios a store already holds complete."""

from conftest import fill_wg_campaign, load_benchmark
from perfport.store import CampaignStatus, Store
from perfport.tune.wg_collect import Scenario

wcr = load_benchmark("wg_collect_rounds")


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
