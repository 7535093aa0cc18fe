"""The work-group questions the store answers: typed rows, complete campaigns only."""

from conftest import fill_wg_campaign
from perfport import Config, Measurement, Outcome, Store, builtin
from perfport.space import PruningReport
from perfport.store import CampaignStatus, ScenarioResult, complete_results, refused_configs


def test_complete_results_and_refusals_are_typed_rows(tmp_path, cpu):
    with Store(tmp_path / "wg.db") as store:
        fill_wg_campaign(store, cpu, "heat", {"width": 64, "height": 64}, 1.0)
        # A partial campaign's results stay out: its unmeasured sizes would look refused.
        sobel = builtin("sobel")
        ids = (store.device_id(cpu), store.kernel_id(sobel), store.problem_id(sobel.problem))
        partial = store.open_campaign("partial", ids, "brute_force", 0, {}, PruningReport(0, 0, ()))
        store.record(partial, Measurement(Config.of(wc=4, wr=4), Outcome.LAUNCH_REFUSED, "no"))
        store.set_status(partial, CampaignStatus.INTERRUPTED)
        rows = complete_results(store, ["heat", "sobel"])
        assert rows and all(isinstance(r, ScenarioResult) for r in rows)
        assert {r.kernel for r in rows} == {"heat"} and rows[0].device == cpu
        assert {r.outcome for r in rows} == {Outcome.OK, Outcome.LAUNCH_REFUSED}
        assert all(r.median_ms is None for r in rows if r.outcome is Outcome.LAUNCH_REFUSED)
        assert complete_results(store, []) == []
        heat = builtin("heat")
        assert refused_configs(store, cpu.fingerprint, heat.source_hash) == [Config.of(wc=8, wr=8)]
        # Refusals count from any campaign, a partial one or a client's report included.
        assert refused_configs(store, cpu.fingerprint, sobel.source_hash) == [Config.of(wc=4, wr=4)]
