"""The calibrated-model figures (report/model_figures.py) drawn from an evaluation's JSON."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from perfport.report.model_figures import model_figures

NS = "{http://www.w3.org/2000/svg}"


def _result(variant: str, device: str, points: list[tuple[int, float, float]]) -> dict:
    return {
        "variant": variant,
        "device": device,
        "points": [
            {"sizes": {"n": n}, "measured_ms": m, "predicted_ms": p,
             "rel_error": abs(p - m) / m,
             "terms": {"p_a * f_x": 0.75, "p_b * f_y": 0.5, "p_c * f_z": -0.25}}
            for n, m, p in points
        ],
    }  # fmt: skip


EVALUATION = {
    "results": [
        _result("matmul-prefetch", "GPU A", [(512, 1.0, 1.1), (256, 0.2, 0.25)]),
        _result("matmul-noprefetch", "GPU A", [(256, 0.4, 0.3), (512, 2.0, 1.5)]),
        _result("fd-16x16", "GPU A", [(1120, 3.0, 3.0)]),
        _result("matmul-prefetch", "CPU/B", [(128, 5.0, 4.0)]),
    ]
}


def test_one_figure_per_family_and_device_and_one_breakdown_per_device():
    files = model_figures(EVALUATION)
    assert sorted(files) == [
        "breakdown-cpu-b.svg", "breakdown-gpu-a.svg", "fd-gpu-a.svg",
        "matmul-cpu-b.svg", "matmul-gpu-a.svg",
    ]  # fmt: skip
    for svg in files.values():
        ET.fromstring(svg)  # well-formed, standalone (its own style)
        assert "<style>" in svg


def test_each_variant_has_a_measured_and_a_predicted_line_and_its_errors():
    root = ET.fromstring(model_figures(EVALUATION)["matmul-gpu-a.svg"])
    lines = [p for p in root.iter(f"{NS}path") if p.get("fill") == "none"]
    assert len(lines) == 4  # two variants, measured and predicted
    assert sum(1 for p in lines if p.get("stroke-dasharray")) == 2
    labels = [t.text for t in root.iter(f"{NS}text")]
    assert "25%" in labels and "10%" in labels  # prefetch at 256 and 512
    assert len(list(root.iter(f"{NS}circle"))) == 4


def test_the_breakdown_shows_positive_shares_at_the_largest_size():
    root = ET.fromstring(model_figures(EVALUATION)["breakdown-gpu-a.svg"])
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "matmul-prefetch n=512" in texts and "fd-16x16 n=1120" in texts
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert len(bars) == 3 * 2  # three variants, the negative share left out
    assert {"p_a", "p_b", "p_c"} <= set(texts)  # the legend names every term
