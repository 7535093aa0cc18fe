"""``misranked`` names each pair's device and sizes as a user writes them: it read
"fd-16x16 vs fd-18x18 at [('n', 560)]" (Python's repr, no device)."""

from __future__ import annotations

from perfport.model.evaluate import Point, VariantResult, ranking


def _result(variant: str, device: str, measured: float, predicted: float) -> VariantResult:
    point = Point({"n": 560, "m": 2}, measured, predicted)
    return VariantResult(variant, device, device + "-fp", (point,))


def test_a_misranked_pair_names_its_device_and_sizes():
    results = [
        _result("fd-16x16", "NVIDIA H100", 1.0, 3.0),
        _result("fd-18x18", "NVIDIA H100", 2.0, 1.0),
        _result("fd-16x16", "NVIDIA H200", 1.0, 1.0),
        _result("fd-18x18", "NVIDIA H200", 2.0, 2.0),
    ]
    pairs, wrong = ranking(results)
    assert pairs == 2
    assert wrong == ("fd-16x16 vs fd-18x18 on NVIDIA H100 at m=2, n=560",)


def test_a_tie_in_the_predictions_is_misranked_in_either_order():
    # Measured 80% apart, predicted exactly equal (the same counts): one order counted it
    # misranked, the other right.
    fast = VariantResult("A", "dev", "fp", (Point({"n": 32}, 0.0746, 0.0305),))
    slow = VariantResult("B", "dev", "fp", (Point({"n": 32}, 0.1328, 0.0305),))
    assert ranking([fast, slow]) == (1, ("A vs B on dev at n=32",))
    assert ranking([slow, fast]) == (1, ("B vs A on dev at n=32",))


def test_ranking_correct_is_null_where_no_pair_was_ranked():
    # --json said true where the text said 'not tested' (no two variants 10% apart).
    from perfport.model.evaluate import Evaluation

    def evaluation(results: list[VariantResult]) -> Evaluation:
        pairs, wrong = ranking(results)
        return Evaluation(tuple(results), (), ("dev",), pairs, wrong)

    close = evaluation([_result("A", "dev", 1.0, 1.0), _result("B", "dev", 1.05, 2.0)])
    assert close.to_json()["ranking_correct"] is None and close.to_json()["ranked_pairs"] == 0
    apart = evaluation([_result("A", "dev", 1.0, 1.0), _result("B", "dev", 2.0, 2.0)])
    assert apart.to_json()["ranking_correct"] is True
