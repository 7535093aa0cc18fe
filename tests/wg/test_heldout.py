"""Held-out-round scores of work-group choices (perfport.wg.heldout), on synthetic rounds
whose true times are known."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from perfport._core import PerfportError
from perfport.cli import main
from perfport.wg import WgDataset, evaluate, save_dataset
from perfport.wg.heldout import (
    Split,
    group_medians,
    heldout_ratios,
    heldout_report,
    load_samples,
    match_rows,
    same_table_ratios,
    score,
)

SIZES = np.array([(c, r) for c in (4, 8, 16, 32, 64) for r in (1, 2, 4, 8)])  # w(32x4) is one


def _noisy(truth: np.ndarray, rounds: int = 8, sigma: float = 0.1, seed: int = 0) -> np.ndarray:
    """(S, W, rounds, 1) samples: the true times with log-normal noise on every launch."""
    rng = np.random.default_rng(seed)
    noise = rng.lognormal(0.0, sigma, size=(*truth.shape, rounds, 1))
    return truth[:, :, None, None] * noise


def test_equal_sizes_score_about_one_held_out_and_well_below_on_the_same_table() -> None:
    samples = _noisy(np.ones((300, len(SIZES))))
    for choice in (0, 7, len(SIZES) - 1):
        picks = np.full(300, choice)
        held = score(samples, picks, "fixed")
        assert held.heldout == pytest.approx(1.0, abs=0.02)
        assert held.heldout_ci95[0] < 1.0 < held.heldout_ci95[1]
        assert held.same_table < 0.95  # the minimum of 20 noisy medians is biased low
        assert held.scenarios == 300


def test_a_truly_slower_size_scores_below_both_ways() -> None:
    truth = np.ones((300, len(SIZES)))
    truth[:, 3] = 1.25
    held = score(_noisy(truth), np.full(300, 3), "slow")
    assert 0.75 < held.heldout < 0.85
    assert held.heldout_ci95[1] < 0.9
    assert held.same_table < held.heldout  # the same table punishes it twice: slow and cursed


def test_the_truly_fastest_size_beats_a_noisy_oracle_held_out() -> None:
    truth = np.full((300, len(SIZES)), 1.05)
    truth[:, 5] = 1.0
    held = score(_noisy(truth), np.full(300, 5), "best")
    assert held.heldout > 1.0  # the half-rounds' oracle sometimes picks a slower size


def test_the_same_table_score_is_the_usual_one() -> None:
    samples = _noisy(np.ones((5, len(SIZES))))
    med = np.median(samples.reshape(5, len(SIZES), -1), axis=2)
    ratios = same_table_ratios(samples, np.array([1, 2, 3, 4, 5]))
    assert ratios == pytest.approx(med.min(1) / med[np.arange(5), [1, 2, 3, 4, 5]])


def test_groups_are_halves_or_alternate_rounds() -> None:
    samples = np.arange(8, dtype=float)[None, None, :, None] + 1.0  # round k takes k + 1
    a, b = group_medians(samples, Split.HALVES)
    assert (a[0, 0], b[0, 0]) == (2.5, 6.5)
    a, b = group_medians(samples, Split.ALTERNATE)
    assert (a[0, 0], b[0, 0]) == (4.0, 5.0)


def test_a_choice_that_did_not_run_in_both_groups_is_not_scored() -> None:
    samples = np.ones((2, 3, 4, 1))
    samples[0, 1, :2] = np.nan  # size 1 of scenario 0 never ran in the first half
    samples[1, 2] = np.nan
    ratios = heldout_ratios(samples, np.array([1, 2]))
    assert np.isnan(ratios).all()
    assert heldout_ratios(samples, np.array([0, 1])) == pytest.approx([1.0, 1.0])
    assert score(samples, np.array([0, 2]), "x").scenarios == 1


def test_no_scenarios_score_nothing_rather_than_fail() -> None:
    empty = score(np.ones((0, len(SIZES), 4, 1)), np.zeros(0, dtype=np.int64), "none")
    assert empty.scenarios == 0 and np.isnan(empty.heldout) and np.isnan(empty.same_table)


def _table_of(samples: np.ndarray, kernels: list[str]) -> WgDataset:
    """A dataset whose table is the medians of ``samples`` (scenarios in reverse order)."""
    med = np.median(samples.reshape(samples.shape[0], samples.shape[1], -1), axis=2)[::-1]
    n = len(kernels)
    return WgDataset(SIZES, med, np.full(n, 4096), np.zeros((n, 1)), ("f",), np.full(n, "cpu"),
                     np.array(kernels[::-1]), np.full(n, "512x512:float"), np.zeros(n, bool))  # fmt: skip


def _save(tmp_path: Path, samples: np.ndarray, kernels: list[str], name: str = "cpu") -> Path:
    n = len(kernels)
    path = tmp_path / f"{name}.samples.npz"
    np.savez(path, samples=samples.astype(np.float32), sizes=SIZES, device=np.full(n, "cpu"),
             kernel=np.array(kernels), dataset=np.full(n, "512x512:float"))  # fmt: skip
    return path


def test_rows_match_by_labels_and_medians_even_under_one_name(tmp_path: Path) -> None:
    kernels = ["synthetic"] * 4 + ["sobel", "heat"]
    samples = _noisy(np.ones((6, len(SIZES))), seed=3)
    rounds = load_samples(_save(tmp_path, samples, kernels))
    data = _table_of(samples.astype(np.float32).astype(float), kernels)
    assert match_rows(data, rounds) == {i: 5 - i for i in range(6)}
    other = _table_of(_noisy(np.ones((6, len(SIZES))), seed=4), kernels)
    assert match_rows(other, rounds) == {}  # the same names, another measurement


def test_the_report_scores_an_evaluation_s_choices(tmp_path: Path) -> None:
    kernels = [f"k{i % 4}" for i in range(40)]
    truth = np.ones((40, len(SIZES)))
    truth[:, SIZES[:, 0] == 4] = 2.0  # narrow work-groups are truly slow; the rest are equal
    samples = _noisy(truth, seed=1).astype(np.float32).astype(float)
    rounds = load_samples(_save(tmp_path, samples, kernels))
    data = _table_of(samples, kernels)
    (result,) = evaluate(data, ["decision_tree+nearest_neighbour"], ["kernel"])
    report = heldout_report(data, result, rounds)
    assert report.matched == 40 and report.rounds == 8 and report.split is Split.HALVES
    method, oracle, expert = report.scores
    assert (method.choice, oracle.choice, expert.choice) == (result.method, "oracle", "w(32x4)")
    assert oracle.same_table == 1.0 and expert.heldout == pytest.approx(1.0, abs=0.05)
    assert method.same_table == pytest.approx(result.performance, rel=1e-5)
    assert method.heldout > method.same_table


def test_the_cli_adds_held_out_scores_and_refuses_bad_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernels = [f"k{i % 3}" for i in range(12)]
    samples = _noisy(np.ones((12, len(SIZES))), seed=2).astype(np.float32).astype(float)
    path = _save(tmp_path, samples, kernels)
    save_dataset(_table_of(samples, kernels), tmp_path / "wg.npz")
    argv = ["wg", "evaluate", "--data", str(tmp_path / "wg.npz"), "--methods",
            "decision_tree+nearest_neighbour", "--partitions", "kernel", "--json"]  # fmt: skip
    assert main([*argv, "--samples", str(path), "--split", "alternate"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert "performance" in row and "per_device" not in row  # the old keys stay
    (report,) = row["heldout"]
    assert report["matched"] == 12 and report["split"] == "alternate"
    assert [s["choice"] for s in report["scores"]][1:] == ["oracle", "w(32x4)"]
    assert main(argv) == 0
    assert "heldout" not in json.loads(capsys.readouterr().out)["results"][0]
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.ones(3))
    other = _save(tmp_path, samples * 2, kernels, "other")  # another measurement's rounds
    for wrong, says in ((bad, "not a samples file"), (tmp_path / "none.npz", "no such file"),
                        (other, "none of its scenarios")):  # fmt: skip
        assert main([*argv, "--samples", str(wrong)]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_loading_refuses_a_single_round(tmp_path: Path) -> None:
    path = _save(tmp_path, np.ones((2, len(SIZES), 1, 1)), ["a", "b"])
    with pytest.raises(PerfportError, match="at least two rounds"):
        load_samples(path)


@pytest.mark.parametrize("keep", [0, 10, 300, -40])
def test_a_samples_file_cut_short_is_one_line(tmp_path: Path, keep: int) -> None:
    # A truncated --samples file gave a zipfile.BadZipFile traceback.
    whole = _save(tmp_path, np.ones((2, len(SIZES), 2, 1)), ["a", "b"]).read_bytes()
    cut = tmp_path / "cut.samples.npz"
    cut.write_bytes(whole[:keep] if keep >= 0 else whole[:keep] + b"\0" * 8)
    with pytest.raises(PerfportError, match="not a samples file of rounds") as refused:
        load_samples(cut)
    assert "\n" not in str(refused.value) and "pickle" not in str(refused.value)


@pytest.mark.parametrize("kind", ["missing", "unreadable"])
def test_a_bad_samples_file_says_where_such_files_come_from(tmp_path: Path, kind: str) -> None:
    # It named a script as if it came with the package; no perfport command writes samples.
    path = tmp_path / "s.samples.npz"
    if kind == "unreadable":
        path.write_bytes(b"not a zip")
    with pytest.raises(PerfportError) as refused:
        load_samples(path)
    assert "wg_rounds.py --save, a script in perfport's source repository" in str(refused.value)


@pytest.mark.parametrize(
    ("arrays", "problem"),
    [
        ({"samples": np.full((2, len(SIZES), 2, 1), "1.0")}, "'samples' holds strings"),
        ({"sizes": np.array(SIZES).astype(str)}, "'sizes' holds strings"),
        ({"device": np.array(["cpu"])}, "'device' has 1 rows for the 2 rows of 'samples'"),
        ({"kernel": np.array([1, 2])}, "'kernel' holds integers"),
        ({"samples": np.ones((2, len(SIZES), 2))}, "'samples' has 3 dimension(s)"),
    ],
)  # fmt: skip
def test_a_samples_file_with_wrong_arrays_is_one_line(
    tmp_path: Path, arrays: dict[str, np.ndarray], problem: str
) -> None:
    # String samples or sizes were a ValueError traceback from astype; a short label array
    # an IndexError while matching rows.
    path = tmp_path / "bad.samples.npz"
    good = {"samples": np.ones((2, len(SIZES), 2, 1)), "sizes": np.array(SIZES),
            "device": np.full(2, "cpu"), "kernel": np.array(["a", "b"]),
            "dataset": np.full(2, "512x512:float")}  # fmt: skip
    np.savez(path, **{**good, **arrays})
    with pytest.raises(PerfportError, match=re.escape(problem)) as refused:
        load_samples(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)
