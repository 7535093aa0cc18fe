"""How many configurations 'results' counts pruned: each once, as 'tune --json' counts them."""

from perfport import Config, Measurement, Outcome, builtin
from perfport.space import ConstraintSource, PruningReport
from perfport.store import Store, best_results

# The space the device leaves: 361 configurations, 132 over its work-group size.
_SPACE = PruningReport(361, 229, (("wc * wr <= 4096", 132, ConstraintSource.DEVICE),))
_OUTSIDE = Config.of(wc=96, wr=96)  # beyond the device's limits: among the 132


def _campaign(store, cpu, key, strategy, results):
    spec = builtin("stencil")
    ids = (store.device_id(cpu), store.kernel_id(spec), store.problem_id(spec.problem))
    campaign = store.open_campaign(key, ids, strategy, 0, {}, _SPACE)
    for config, outcome in results:
        times = (1.0,) if outcome is Outcome.OK else ()
        store.record(campaign, Measurement(config, outcome, "", times))


def _pruned(store) -> int:
    (best,) = best_results(store)
    return best.outcomes.get("pruned", 0)


def test_a_list_counts_its_own_pruned_configurations_only(db, cpu):
    # A --configs campaign stores the listed configuration the device cannot run as pruned;
    # results added the space's 132 to it (133), where tune --json said 1.
    with Store(db) as store:
        listed = [(Config.of(wc=32, wr=4), Outcome.OK), (_OUTSIDE, Outcome.PRUNED)]
        _campaign(store, cpu, "l", "listed", listed)
        assert _pruned(store) == 1


def test_a_search_beside_a_list_counts_the_space_once(db, cpu):
    with Store(db) as store:
        _campaign(store, cpu, "l", "listed", [(_OUTSIDE, Outcome.PRUNED)])
        # pruned once built: inside the space, so not among its 132
        built = Config.of(wc=64, wr=64)
        _campaign(store, cpu, "b", "brute_force",
                  [(Config.of(wc=32, wr=4), Outcome.OK), (built, Outcome.PRUNED)])  # fmt: skip
        assert _pruned(store) == 132 + 1
