"""experiments/2026-11-22-select-portable/select_portable.py: bad arguments are one-line errors before any work is done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import load_experiment

module = load_experiment("select_portable")

CONFIGS = [(t, w) for t in (1, 2, 4) for w in (32, 64)]


def write_cache(path: Path, device: str, seed: int, **extra: object) -> Path:
    """A small Kernel Tuner cache: times that differ per device so each has its own optimum."""
    entries = {
        f"{t},{w}": {"tile": t, "wg": w, "time": 1.0 + ((t * 7 + w + seed * 13) % 11)}
        for t, w in CONFIGS
    }
    cache = {"device_name": device, "tune_params_keys": ["tile", "wg"], "cache": entries}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**cache, **extra}))
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A --data folder laid out like the shared one, each hub cache a small crafted one (plain
    JSON under the .json.gz names: the loader reads both)."""
    hub = tmp_path / "kerneltuner-benchmark_hub"
    for folder, devices in module.KERNELS.values():
        for i, device in enumerate(devices):
            write_cache(hub / folder / f"{device}.json.gz", device, i)
    return tmp_path


def error_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as info:
        module.main(list(argv))
    assert info.value.code == 2
    err = capsys.readouterr().err
    # argparse's usage, then the error on one line.
    assert err.startswith("usage:") and "Traceback" not in err and err.count(": error: ") == 1
    line = err.splitlines()[-1]
    assert ": error: " in line
    return line


def test_runs_on_the_pooled_caches_and_an_added_one(data, tmp_path, capsys):
    extra = write_cache(tmp_path / "mine.json", "Mine", 5)
    out = tmp_path / "loo.md"
    module.main(["--data", str(data), "--ks", "1-2", "--add", f"convolution={extra}",
                 "--out", str(out)])  # fmt: skip
    text = capsys.readouterr().out
    assert "### GEMM: 2 devices" in text and "### convolution: 4 devices" in text
    assert "| portable | Mine |" in text and out.read_text().strip() == text.strip()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--ks", "x-y"], "--ks 'x-y': give a range"),
        (["--ks", "0-1"], "--ks '0-1'"),
        (["--ks", "5-2"], "--ks '5-2'"),
        (["--ks", "\u00b2-3"], "--ks '\u00b2-3'"),  # isdigit() passes it, int() does not
        (["--ks", "1-"], "--ks '1-'"),
        (["--ks", "1-99999"], "--ks 1-99999: GEMM has only"),
        (["--add", "convolution="], "--add 'convolution=': give KERNEL=CACHE"),
        (["--add", "convolution"], "--add 'convolution'"),
        (["--add", "conv=x.json"], "--add 'conv=x.json'"),
        (["--reach", "0"], "--reach 0.0: give a geometric mean in (0, 1]"),
        (["--reach", "nan"], "--reach nan"),
        (["--out", "/nonexistent/dir/x.md"], "--out /nonexistent/dir/x.md: no folder"),
    ],
)
def test_bad_arguments_are_one_line_errors(data, capsys, argv, message):
    assert message in error_of(capsys, "--data", str(data), *argv)


def test_bad_caches_are_refused_before_any_leave_one_out(data, tmp_path, capsys, monkeypatch):
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("leave_one_out ran before every cache was checked")

    monkeypatch.setattr(module, "leave_one_out", no_work)
    line = error_of(capsys, "--data", str(data), "--add", "convolution=/nonexistent.json.gz")
    assert "convolution: /nonexistent.json.gz: cannot be read" in line
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tune_params_keys": ["bx"],
                                 "cache": {"1": {"bx": 1, "time": 1.0}, "2": {"bx": 2, "time": 2.0}}}))  # fmt: skip
    line = error_of(capsys, "--data", str(data), "--add", f"convolution={other}")
    assert "other.json does not tune it" in line
    # A cache already pooled, by another spelling of its path: refused, not counted twice.
    pooled = data / "kerneltuner-benchmark_hub" / "convolution_milo" / "A100.json.gz"
    again = data / "kerneltuner-benchmark_hub" / "gemm" / ".." / "convolution_milo" / "A100.json.gz"
    line = error_of(capsys, "--data", str(data), "--add", f"convolution={again}")
    assert f"is given twice (as {pooled})" in line
    mine = write_cache(tmp_path / "mine.json", "Mine", 5)
    line = error_of(capsys, "--data", str(data), "--add", f"GEMM={mine}", "--add", f"GEMM={mine}")
    assert "GEMM: " in line and "given twice" in line
    line = error_of(capsys, "--data", str(tmp_path / "nowhere"))
    assert "GEMM: " in line and "cannot be read" in line
