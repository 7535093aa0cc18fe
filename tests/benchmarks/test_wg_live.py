"""benchmarks/wg_live.py: measuring on the local device and reporting, end to end at a small
size, and the report's fractions recomputed from the stored times."""

from __future__ import annotations

import argparse
import json

import pytest

from conftest import load_benchmark

module = load_benchmark("wg_live")


def test_measure_then_report(tmp_path, capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("llvmlite")
    out = tmp_path / "live"
    module.measure(argparse.Namespace(device="opencl:0:0", out=str(out), sizes=[64], rounds=1,
                                      kernels=["cross"]))  # fmt: skip
    rows = module._measured(out)
    assert [r["kernel"] for r in rows] == ["cross"] and rows[0]["problem"]["width"] == 64
    module.report(argparse.Namespace(dirs=[str(out)], json=True))
    (scenario,) = json.loads(capsys.readouterr().out)["scenarios"]
    times = {k: t for k, t in rows[0]["times"].items() if t is not None}
    for method in module.METHODS:
        wc, wr = scenario[method]["wg"]
        assert scenario[method]["fraction"] == pytest.approx(min(times.values()) / times[(wc, wr)])
    assert scenario["w(32x4)"]["fraction"] == pytest.approx(min(times.values()) / times[(32, 4)])
