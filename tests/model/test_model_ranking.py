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
